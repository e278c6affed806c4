"""The Django side of importing candidate samples: sources, the batched pipeline, formats.

The pure readers live in ``annotation.formats``; the public entry points are the services
``import_job_create`` and ``import_job_run`` in ``annotation.imports.services``.
"""
