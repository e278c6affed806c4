"""Dates and times on every page, in English as in Chinese: one ISO-like style, 24-hour
(Django's English default "m/d/Y P" printed "p.m." and, ending a sentence, "p.m..")."""

DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
TIME_FORMAT = "H:i"
