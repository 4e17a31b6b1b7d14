"""One typed settings object: defaults < config file < ``MEMSTRATA_*`` environment < flags.

This is the only module that reads the environment. The config file is TOML, found at
``$MEMSTRATA_CONFIG`` or ``<config home>/memstrata/config.toml``; a missing file is fine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from memstrata.errors import ConfigError


def _xdg(var: str, fallback: str) -> Path:
    base = os.environ.get(var)
    return Path(base) if base else Path.home() / fallback


def default_data_dir() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share") / "memstrata"


def default_config_file() -> Path:
    explicit = os.environ.get("MEMSTRATA_CONFIG")
    if explicit:
        return Path(explicit)
    return _xdg("XDG_CONFIG_HOME", ".config") / "memstrata" / "config.toml"


class Settings(BaseSettings):
    """memstrata's settings. Every field can be set as ``MEMSTRATA_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="MEMSTRATA_", extra="forbid", frozen=True)

    data_dir: Path = Field(default_factory=default_data_dir, description="where memory lives")
    host: str = Field("127.0.0.1", description="address the server binds")
    port: int = Field(8765, ge=1, le=65535, description="port the server listens on")
    trace: bool = Field(True, description="write the raw trace of captured turns")
    load_sample: bool = Field(
        True, description="load the small bilingual sample memory when the store is empty"
    )
    sample_user: str = Field("demo", description="the user the sample memory belongs to")

    @field_validator("data_dir", mode="after")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @property
    def db_path(self) -> Path:
        return self.data_dir / "memstrata.db"

    @property
    def trace_dir(self) -> Path:
        return self.data_dir / "trace"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=default_config_file())
        return (init_settings, env_settings, toml)


def load_settings(**overrides: Any) -> Settings:
    """Settings from every source, with ``overrides`` (flags) on top; None values are ignored."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid settings: {problems}") from exc
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the config file {default_config_file()}: {exc}") from exc
