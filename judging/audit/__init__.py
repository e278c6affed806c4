"""The calibration audit: audit sets, auditors' rating queue and form, statistics."""
