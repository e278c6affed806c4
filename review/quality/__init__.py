"""Reviewer quality: pure computation over reviewers' labels (no Django)."""
