"""Uploads of model responses and verdicts, run as background import jobs."""
