"""Stage 5: pictures of machines. DOT (and SVG/PNG through Graphviz's `dot`), Mermaid, with trace overlays.

The names are imported on first use (PEP 562), so that the registry can read `skillc.render.codes` without
loading the renderers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillc.lazy import exports

if TYPE_CHECKING:
    from skillc.render.dot import RenderError, render_image, to_dot
    from skillc.render.mermaid import to_mermaid
    from skillc.render.overlay import Overlay, overlay_from_trace

__all__ = ["Overlay", "RenderError", "overlay_from_trace", "render_image", "to_dot", "to_mermaid"]

__getattr__ = exports(__name__, {"RenderError": "skillc.render.dot", "render_image": "skillc.render.dot",
                                 "to_dot": "skillc.render.dot", "to_mermaid": "skillc.render.mermaid",
                                 "Overlay": "skillc.render.overlay", "overlay_from_trace": "skillc.render.overlay"})
