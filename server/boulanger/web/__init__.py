"""Transport: the Starlette application, WebSockets and HTTP around the race logic."""
