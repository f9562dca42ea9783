"""What the stateful apps share, one module per concern: `records` (pages, look-ups, search, "produces" edges),
`values` (times, money, names), `auth` (tokens, logins) and `people` (the directory of calendar and docs).

Kept out of the app packages so that each app reads as its tools only, and so that pagination, not-found
errors, token expiry and date parsing behave the same in every app (an agent that learns one learns them all).
"""
