"""The read-only web face (docs/web.md): pages and JSON over the referee's database.

:func:`.app.create_app` builds the Starlette application; :mod:`.views` gathers what each page
shows from the storage (blocking, run in a worker thread), :mod:`.table` draws a recorded
match's table at any step, :mod:`.params` checks the query parameters and :mod:`.security`
holds the headers and the read-only rule every response follows. It imports the storage, the
ladder and the SDK, never play, net or grpc: it runs beside the referee or on its own.
"""
