"""Readers of evaluated models' outputs (pure: no Django)."""
