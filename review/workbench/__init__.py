"""The reviewer's workbench: its page, the form posted without script, and the reserved next
sample's endpoints."""
