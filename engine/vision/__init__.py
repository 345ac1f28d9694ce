"""What the agent sees as pixels: JPEG screenshots with perceptual hashes, and Set-of-Mark overlays."""

from engine.vision.screenshot import (
                                      UNCHANGED_THRESHOLD,
                                      Screenshot,
                                      ScreenshotTracker,
                                      capture_screenshot,
                                      hash_distance,
)
from engine.vision.som import Mark, SomResult, draw_som, som_image, som_png

__all__ = ["Screenshot", "ScreenshotTracker", "capture_screenshot", "hash_distance", "UNCHANGED_THRESHOLD",
           "Mark", "SomResult", "draw_som", "som_image", "som_png"]
