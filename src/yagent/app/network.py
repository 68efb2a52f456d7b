"""`[network]`: what the browser and `web_fetch` may reach beyond the public internet.

Contract: `allow_local` lists local services (grammar and refusals in `tools.localnet`: a port
always, never metadata, link-local or a public address); an entry that cannot be read is a
validation error naming it, like every other key. An empty list keeps netguard strict. The key
loosens, so `app.projectkeys` withholds a project's `[network]` until the person trusted it, and
`app.safety.with_allow_local` adds the CLI's `--allow-local` entries for one run.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from yagent.tools.localnet import allow_of


class NetworkSettings(BaseModel):
    """`allow_local`: the services the browser and web_fetch may reach (`tools.localnet`)."""

    model_config = ConfigDict(extra="forbid")

    allow_local: list[str | int] = Field(default_factory=list)

    @field_validator("allow_local")
    @classmethod
    def _readable_openings(cls, value: list[str | int]) -> list[str | int]:
        allow_of(value)  # a LocalNetError is a ValueError: pydantic reports it with the key
        return value
