"""An MCP server (stdio, the Python `mcp` 2.x SDK) whose tool `sign_up` asks the user twice: a
name, then a city (the city's question needs the name's answer); it answers with both. Its tool
`pick_color` asks for a color, whose form has a default. Its questions are
the SDK's resolvers: under MCP 2025-11-25 each is asked during the call (`elicitation/create`),
under 2026-07-28 each is a round of an input-required result, the name's answer carried in the
state. A question not accepted fails the call."""

from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Elicit, MCPServer, Resolve

server = MCPServer("elicit-twice")


class Name(BaseModel):
    name: str


class City(BaseModel):
    city: str


def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


def ask_city(name: Annotated[Name, Resolve(ask_name)]) -> Elicit[City]:
    return Elicit("Your city?", City)


@server.tool()
async def sign_up(
    name: Annotated[Name, Resolve(ask_name)],
    city: Annotated[City, Resolve(ask_city)],
) -> str:
    """Signs the user up, asking for a name and a city."""
    return f"signed up {name.name} from {city.city}"


class Color(BaseModel):
    color: str = "blue"


def ask_color() -> Elicit[Color]:
    return Elicit("Which color?", Color)


@server.tool()
async def pick_color(color: Annotated[Color, Resolve(ask_color)]) -> str:
    """Picks a color, asking which."""
    return f"picked {color.color}"


if __name__ == "__main__":
    server.run("stdio")
