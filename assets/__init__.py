"""Vigil's runtime files: the demo shop (demo/), the planner's prompt (prompts/) and the icon (icons/).

Installed as the package `vigil_assets` (pyproject.toml maps this folder to that name), so that they ship in the
wheel and `engine.assets` finds them through importlib.resources wherever Vigil is installed."""
