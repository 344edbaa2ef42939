"""A lake's object store settings, from the standard AWS environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from warehouse.errors import UsageError


@dataclass(frozen=True)
class S3Settings:
    """S3 settings from the standard AWS environment variables (keys never printed)."""

    key_id: str | None
    secret: str | None
    session_token: str | None
    region: str
    endpoint: str | None
    url_style: str
    use_ssl: bool

    def describe(self) -> str:
        """Endpoint, region and URL style, without credentials."""
        where = self.endpoint or "AWS"
        scheme = "https" if self.use_ssl else "http"
        return f"{scheme}://{where} (region {self.region}, {self.url_style}-style URLs)"


def s3_settings(env: dict[str, str] | None = None) -> S3Settings:
    """`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` (or
    `AWS_DEFAULT_REGION`), `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`; its scheme sets SSL) and
    `TAME_WH_S3_URL_STYLE` (`path`, the default with an endpoint, or `vhost`)."""
    env = dict(os.environ if env is None else env)
    endpoint_url = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    endpoint = None
    use_ssl = True
    if endpoint_url:
        parts = urlsplit(endpoint_url if "://" in endpoint_url else f"https://{endpoint_url}")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(
                "AWS_ENDPOINT_URL(_S3) must be an http:// or https:// URL of the S3 endpoint"
            )
        endpoint = parts.netloc + parts.path.rstrip("/")
        use_ssl = parts.scheme == "https"
    url_style = env.get("TAME_WH_S3_URL_STYLE") or ("path" if endpoint else "vhost")
    if url_style not in ("path", "vhost"):
        raise UsageError(f"TAME_WH_S3_URL_STYLE must be path or vhost, got {url_style!r}")
    return S3Settings(
        key_id=env.get("AWS_ACCESS_KEY_ID") or None,
        secret=env.get("AWS_SECRET_ACCESS_KEY") or None,
        session_token=env.get("AWS_SESSION_TOKEN") or None,
        region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        endpoint=endpoint,
        url_style=url_style,
        use_ssl=use_ssl,
    )
