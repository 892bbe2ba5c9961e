"""An MCP server (stdio, the Python `mcp` 2.x SDK, MCP 2026-07-28) whose tool `pay` acts, then
asks: it charges — a line `charge <key>` in the ledger file `$LEDGER`, with the idempotency key
the client sends in `_meta` — then answers *input required*, asking where to send the receipt,
with the charge in its `requestState`. Called again with the answer and the state, it does not
charge again: it says where the receipt went.

The state is sealed with a fixed key (`RequestStateSecurity(keys=…)`), so a server started
again — another process — opens the state the first one gave."""

import json
import os

from idempotency import key_of
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

LEDGER = os.environ["LEDGER"]

server = MCPServer(
    "payments",
    request_state_security=RequestStateSecurity(keys=[b"k" * 32]),
)


@server.tool()
async def pay(amount: int, ctx: Context) -> str | InputRequiredResult:
    """Charges `amount`, then asks where to send the receipt."""
    if ctx.request_state is None:
        with open(LEDGER, "a") as ledger:
            ledger.write(f"charge {key_of(ctx)} {amount}\n")
        return InputRequiredResult(
            inputRequests={
                "receipt": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message=f"Charged {amount}. Where should the receipt go?",
                        requestedSchema={
                            "type": "object",
                            "properties": {"email": {"type": "string"}},
                            "required": ["email"],
                        },
                    )
                )
            },
            requestState=json.dumps({"charged": amount}),
        )
    charged = json.loads(ctx.request_state)["charged"]
    answer = (ctx.input_responses or {}).get("receipt")
    if isinstance(answer, dict):
        action, content = answer.get("action"), answer.get("content") or {}
    else:
        action, content = answer.action, answer.content or {}
    if action != "accept":
        return f"charged {charged}; no receipt ({action})"
    return f"charged {charged}; receipt sent to {content['email']}"


if __name__ == "__main__":
    server.run("stdio")
