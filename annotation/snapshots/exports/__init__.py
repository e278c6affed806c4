"""Release writers: snapshot records to JSONL, Parquet, VLMEvalKit TSV, Hugging Face folders and
MMOOC's split layout, plus the manifest helpers. Plain Python and pyarrow, no Django, so the
writers can be tested and benchmarked alone; the service feeds them records chunk by chunk.
"""
