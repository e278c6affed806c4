"""Calling judges: the chat-completions client, the execution of many calls, rate limits,
egress rules, the test call (probe) and the parsing of a judge's output. Pure: no Django."""
