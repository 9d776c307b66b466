"""The scenario error's old name: every configuration error is a
control_plane.config.ConfigError (a list of field path and reason)."""

from __future__ import annotations

from control_plane.config import ConfigError

ScenarioError = ConfigError
