"""Settings as a package: `base` (shared, every variable read once from the environment),
`production` (the default: base plus what makes DEBUG-off safe) and `test` (the suite's)."""
