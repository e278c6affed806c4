"""Calling judges: the chat-completions client, the execution of many calls, rate limits,
the test call (probe) and the parsing of a judge's output (the egress rules are core.egress).
Pure: no Django."""
