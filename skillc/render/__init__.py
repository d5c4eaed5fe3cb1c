"""Stage 5: pictures of machines. DOT (and SVG/PNG through Graphviz's `dot`), Mermaid, with trace overlays."""

from skillc.render.dot import RenderError, render_image, to_dot
from skillc.render.mermaid import to_mermaid
from skillc.render.overlay import Overlay, overlay_from_trace

__all__ = ["Overlay", "RenderError", "overlay_from_trace", "render_image", "to_dot", "to_mermaid"]
