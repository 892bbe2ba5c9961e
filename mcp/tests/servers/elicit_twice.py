"""An MCP server (stdio, the Python `mcp` 2.x SDK) whose tool asks the user twice: a name,
then a city; it answers with both, or says which question was not accepted."""

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("elicit-twice")


class Name(BaseModel):
    name: str


class City(BaseModel):
    city: str


@server.tool()
async def sign_up(ctx: Context) -> str:
    """Signs the user up, asking for a name and a city."""
    first = await ctx.elicit("Your name?", Name)
    if first.action != "accept":
        return f"the name was not given: {first.action}"
    second = await ctx.elicit("Your city?", City)
    if second.action != "accept":
        return f"the city was not given: {second.action}"
    return f"signed up {first.data.name} from {second.data.city}"


if __name__ == "__main__":
    server.run("stdio")
