"""CI metadata (commit, branch, job) read from the environment of GitHub Actions or GitLab CI."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def _github(env: Mapping[str, str]) -> dict[str, Any]:
    """GitHub Actions variables."""
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    repo, run_id = env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    return {
        "provider": "github-actions",
        "commit": env.get("GITHUB_SHA"),
        "branch": env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME"),
        "repository": repo,
        "workflow": env.get("GITHUB_WORKFLOW"),
        "job": env.get("GITHUB_JOB"),
        "run_id": run_id,
        "run_attempt": env.get("GITHUB_RUN_ATTEMPT"),
        "url": f"{server}/{repo}/actions/runs/{run_id}" if repo and run_id else None,
    }


def _gitlab(env: Mapping[str, str]) -> dict[str, Any]:
    """GitLab CI variables."""
    return {
        "provider": "gitlab-ci",
        "commit": env.get("CI_COMMIT_SHA"),
        "branch": env.get("CI_COMMIT_REF_NAME"),
        "repository": env.get("CI_PROJECT_PATH"),
        "pipeline_id": env.get("CI_PIPELINE_ID"),
        "job": env.get("CI_JOB_NAME"),
        "run_id": env.get("CI_JOB_ID"),
        "url": env.get("CI_JOB_URL") or env.get("CI_PIPELINE_URL"),
    }


def ci_metadata(env: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """What is known about the CI job running this process; None outside CI."""
    env = os.environ if env is None else env
    if env.get("GITHUB_ACTIONS") == "true":
        found = _github(env)
    elif env.get("GITLAB_CI") == "true":
        found = _gitlab(env)
    elif env.get("CI", "").lower() in ("true", "1"):
        found = {"provider": "unknown", "commit": env.get("GIT_COMMIT") or env.get("COMMIT_SHA")}
    else:
        return None
    return {k: v for k, v in found.items() if v}
