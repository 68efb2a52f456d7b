"""A small polyglot repository for the code-graph tests: real Python, JS, TS, TSX and Go."""

from __future__ import annotations

from pathlib import Path

MODELS_PY = '''"""A module docstring mentioning Widget and render."""
import os


class Widget:
    """Widget docs: render is mentioned here."""

    class Part:
        def render(self, depth=0):
            return helper(depth)

    def render(self, render=None):  # a parameter named render is not a reference
        # render() in a comment is not a reference
        text = "render() in a string"
        return self.Part().render(depth=1)

    @staticmethod
    def build():
        return Widget()


def helper(n):
    def inner():
        return helper(n - 1)

    return inner


def render(widget):
    return widget.render()
'''

OTHER_PY = """from pkg.models import render, Widget


def main():
    w = Widget()
    handler = render
    return render(w)
"""

APP_JS = """function render(x) { return x; }
const renderAll = (items) => items.map(render);
let paint = function () { return render(1); };
class View {
  render() { return render(this); }
  static create() { return new View(); }
  handler = () => this.render();
}
const obj = { render() {} };
export default { renderAll };
"""

TYPES_TS = """export interface Renderer { render(x: number): string; }
export type RenderFn = (x: number) => string;
export enum Mode { Fast, Slow }
export abstract class Base { abstract render(): void; }
export class Impl extends Base implements Renderer {
  render(x: number = 0): string { return String(x); }
}
export function useRenderer(r: Renderer): string { return r.render(2); }
"""

COMP_TSX = """export const Button = (props: { label: string }) => <button>{props.label}</button>;
export function Page() { return <Button label="x" />; }
"""

SERVER_GO = """package srv

type Server struct{ name string }
type Handler interface{ Serve(x int) error }
type Alias = Server
type List[T any] []T

func NewServer() *Server { return &Server{} }
func (s *Server) Serve(x int) error { return s.helper() }
func (s *Server) helper() error { return nil }
func (l List[T]) Len() int { return len(l) }
func run() { s := NewServer(); _ = s.Serve(1); f := func() { NewServer() }; f() }
"""

FILES = {
    ".gitignore": "gen/\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    "pkg/models.py": MODELS_PY,
    "pkg/other.py": OTHER_PY,
    "web/app.js": APP_JS,
    "web/types.ts": TYPES_TS,
    "web/comp.tsx": COMP_TSX,
    "srv/server.go": SERVER_GO,
    "gen/models.py": "def render():\n    pass\n",
    "broken.py": "def render(:\n    pass\n",
    "README.md": "render the Widget\n",
    "notes.txt": "render\n",
    "Makefile": "render:\n\techo render\n",
}


def build(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root
