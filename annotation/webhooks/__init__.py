"""Webhooks that tell other systems what happened here (Standard Webhooks, signed)."""
