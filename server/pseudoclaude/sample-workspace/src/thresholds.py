"""Allowed temperature range, in degrees Celsius."""

LOW = 12.0
HIGH = 28.0
