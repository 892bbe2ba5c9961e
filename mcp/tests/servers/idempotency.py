"""The idempotency key hookchain sends with each tool call, in the request's `_meta`."""

from mcp.server.mcpserver import Context

KEY = "io.hookchain/idempotencyKey"


def key_of(ctx: Context):
    """The call's idempotency key, or None."""
    meta = ctx.request_context.meta
    if meta is None:
        return None
    if isinstance(meta, dict):
        return meta.get(KEY)
    return (getattr(meta, "model_extra", None) or {}).get(KEY)
