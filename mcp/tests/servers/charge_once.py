"""An MCP server (stdio, the Python `mcp` 2.x SDK) whose tool `charge` acts on the world — a
line in the ledger file `$LEDGER` — once per idempotency key, as an idempotent payment API
does: the key the client sends in the request's `_meta` (`io.hookchain/idempotencyKey`). Every
attempt is noted in the ledger too, with its key.

Told to (`$DIE_AT`), the process dies — exits at once, as if killed — the first time it gets
there: `before` acting, or `after` acting and before answering; `$DIED` marks that it did, so
the server started again after it lives."""

import json
import os

from idempotency import key_of
from mcp.server.mcpserver import Context, MCPServer

LEDGER = os.environ["LEDGER"]
DIE_AT = os.environ.get("DIE_AT", "")
DIED = os.environ["DIED"]

server = MCPServer("charger")


def lines():
    if not os.path.exists(LEDGER):
        return []
    with open(LEDGER) as ledger:
        return [json.loads(line) for line in ledger if line.strip()]


def note(entry):
    with open(LEDGER, "a") as ledger:
        ledger.write(json.dumps(entry) + "\n")
        ledger.flush()
        os.fsync(ledger.fileno())


def die_here(point):
    if DIE_AT == point and not os.path.exists(DIED):
        open(DIED, "w").close()
        os._exit(1)


@server.tool()
async def charge(amount: int, ctx: Context) -> str:
    """Charges the card on file."""
    key = key_of(ctx)
    note({"attempt": key})
    die_here("before")
    if any(line.get("acted") == key for line in lines()) and key is not None:
        return f"charged {amount} (once, under {key})"
    note({"acted": key, "amount": amount})
    die_here("after")
    return f"charged {amount}"


if __name__ == "__main__":
    server.run("stdio")
