"""Normalisation: actions → action schemas with typed arguments (the intermediate program).

An environment *profile* lists the action templates of an environment in
order, each as words with `{role}` holes (`take {item} from {source}`); a
hole `{role:a|b|c}` takes one of a few literal words (the verb of `chop`,
`slice`, `dice`). A role's value must be an entity the trace lists, when it
lists any, and is typed by the entity's type. Traces of environments without
a built-in profile bring their own templates in the same notation.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.files import FileProblem, JSONProblem, confined, loads, read_text
from skillc.frontends.distill import codes
from skillc.frontends.distill.trace import Episode, successful

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object

HOLE = re.compile(r"\{(\w+)(?::([^}]*))?\}")

# Names the generated code uses for itself, Python builtins, and words `.skm` expressions always read as
# keywords: a role or a schema with one of these names gets `_value` appended.
RESERVED = frozenset({
    "env", "run", "i", "at", "available_actions", "available_actions_now", "observation", "admissible",
    "annotations", "true", "false", "none", "list", "map", "quote", "contains",
} | {name for name in dir(builtins) if name.islower()})


def identifier(text: str, *, variable: bool = True) -> str:
    """`text` as a name that is safe in Python and `.skm` alike: ASCII, lowercase, not a keyword.

    A `variable` (a parameter) must also not shadow what generated code uses (`RESERVED`); a schema
    name only has to avoid keywords.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    name = re.sub(r"\W+", "_", ascii_text).strip("_").lower() or "value"
    if name[0].isdigit():
        name = "n_" + name
    if (variable and name in RESERVED) or name in {"true", "false", "none"} or keyword.iskeyword(name) \
            or keyword.issoftkeyword(name) or re.fullmatch(r"(i|rounds)_\d+", name):
        name += "_value"
    return name


@attrs.frozen
class Template:
    """One action template: its schema name, its text and its holes."""

    schema: str
    text: str
    roles: tuple[str, ...]
    choices: dict[str, tuple[str, ...]] = attrs.field(eq=False)
    regex: re.Pattern[str] = attrs.field(eq=False, repr=False)

    @classmethod
    def parse(cls, text: str, schema: str | None = None) -> Template:
        """A template from `take {item} from {source}`; the schema defaults to its literal words joined by `_`.

        Hole names become identifiers (`identifier`), and the text is rewritten with them, so generated
        code can name a parameter after its role. A hole used twice is a ValueError.
        """
        roles: list[str] = []
        choices: dict[str, tuple[str, ...]] = {}
        pattern, canonical = [], []
        pos = 0
        for m in HOLE.finditer(text):
            pattern.append(re.escape(text[pos:m.start()]))
            canonical.append(text[pos:m.start()])
            role = identifier(m.group(1))
            if role in roles:
                raise ValueError(f"template {text!r} uses the hole {{{role}}} twice")
            roles.append(role)
            group = f"g{len(roles)}"
            if m.group(2):
                choices[role] = tuple(c.strip() for c in m.group(2).split("|") if c.strip())
                if not choices[role]:
                    raise ValueError(f"template {text!r} offers no word for {{{role}:…}}")
                pattern.append(f"(?P<{group}>" + "|".join(re.escape(c) for c in choices[role]) + ")")
                canonical.append("{" + role + ":" + "|".join(choices[role]) + "}")
            else:
                pattern.append(f"(?P<{group}>.+?)")
                canonical.append("{" + role + "}")
            pos = m.end()
        pattern.append(re.escape(text[pos:]))
        canonical.append(text[pos:])
        words = re.sub(r"\W+", "_", HOLE.sub(" ", text).strip()).strip("_")
        name = schema or identifier(words or "act", variable=False)
        return cls(name, "".join(canonical), tuple(roles), choices,
                   re.compile("".join(pattern) + r"\Z", re.IGNORECASE))

    def values(self, m: re.Match[str]) -> list[str]:
        """The value of each role in a match of `regex`."""
        return [m.group(f"g{i}") for i in range(1, len(self.roles) + 1)]

    def render(self, values: dict[str, str]) -> str:
        """The concrete command for `values` (one per role)."""
        return HOLE.sub(lambda m: values[m.group(1)], self.text)


@attrs.frozen
class Profile:
    """What skillc knows of one environment: templates in match order, and navigation hints."""

    name: str
    templates: tuple[Template, ...]
    nav_schemas: frozenset[str] = frozenset()
    nav_types: frozenset[str] = frozenset()
    effects: dict[str, str] = attrs.field(factory=dict, eq=False)
    support: frozenset[str] | None = None  # schemas that may be support actions; None: any (judged per action)


def _templates(rows: Iterable[tuple[str, str]]) -> tuple[Template, ...]:
    return tuple(Template.parse(text, schema) for text, schema in rows)


TEXTWORLD = Profile(
    "textworld",
    _templates([
        ("take {item} from {source}", "take"),
        ("take {item}", "pick_up"),
        ("cook {item} with {appliance}", "cook"),
        ("{style:chop|slice|dice} {item} with {tool}", "cut"),
        ("go {direction:north|south|east|west}", "go"),
        ("open {target}", "open"),
        ("close {target}", "close"),
        ("unlock {target} with {key}", "unlock"),
        ("lock {target} with {key}", "lock"),
        ("prepare meal", "prepare_meal"),
        ("eat {item}", "eat"),
        ("drink {item}", "drink"),
        ("drop {item}", "drop"),
        ("put {item} on {surface}", "put"),
        ("insert {item} into {container}", "insert"),
        ("examine {target}", "examine"),
        ("read {target}", "read"),
        ("look", "look"),
        ("inventory", "inventory"),
    ]),
    nav_schemas=frozenset({"go"}),
    nav_types=frozenset({"d"}),
    effects={
        "take": "{item} is carried (taken from {source})",
        "pick_up": "{item} is carried",
        "cook": "{item} is cooked with {appliance}",
        "cut": "{item} is cut ({style}) with {tool}",
        "go": "the player has moved {direction}",
        "open": "{target} is open",
        "close": "{target} is closed",
        "unlock": "{target} is unlocked",
        "lock": "{target} is locked",
        "prepare_meal": "the meal is prepared and carried",
        "eat": "{item} is eaten",
        "drink": "{item} is drunk",
        "drop": "{item} is on the floor",
        "put": "{item} is on {surface}",
        "insert": "{item} is in {container}",
    },
)

PROFILES = {"textworld": TEXTWORLD}

# TextWorld's own type names, for docstrings and reports.
TYPE_NAMES = {"f": "food", "o": "object", "c": "container", "s": "supporter", "d": "door", "k": "key",
              "r": "room", "t": "thing", "oven": "oven", "stove": "stove", "toaster": "toaster",
              "meal": "meal", "enum": "word", "thing": "thing"}


@attrs.frozen
class Arg:
    """One argument of an action: its role, its concrete value and the value's type."""

    role: str
    value: str
    type: str
    entity: bool = True


@attrs.frozen
class Action:
    """A parsed action: the schema it instantiates and its arguments in template order."""

    schema: str
    args: tuple[Arg, ...]
    text: str = attrs.field(eq=False)
    template: Template = attrs.field(eq=False, repr=False)

    @property
    def entities(self) -> tuple[Arg, ...]:
        """The arguments that are entities (not literal choices)."""
        return tuple(a for a in self.args if a.entity)

    @property
    def focus(self) -> Arg | None:
        """The first entity argument: what the action is done to."""
        ents = self.entities
        return ents[0] if ents else None


@attrs.frozen
class Program:
    """A trace in intermediate form: its parsed actions, with the trace they came from."""

    trace: Episode
    actions: tuple[Action, ...]
    profile: Profile = attrs.field(eq=False, repr=False)


def profile_for(trace: Episode) -> Profile:
    """The trace's environment profile, extended by the profile and templates it brings (ValueError if bad)."""
    base = PROFILES.get(trace.env) or Profile(trace.env, ())
    if trace.profile is not None:
        base = declared_profile(trace.profile, base, _folder(trace))
    return _with_templates(base, trace.templates)


def _with_templates(base: Profile, texts: Iterable[str]) -> Profile:
    """`base` with more templates (schemas named after their words), the most specific tried first."""
    templates = list(base.templates)
    names = {t.schema for t in templates}
    extra = []
    for text in texts:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a template is empty or not a string")
        extra.append(Template.parse(text))
    # The most specific template wins: `take {item} {extra}` is tried before `take {item}`.
    extra.sort(key=lambda t: (-len(HOLE.sub("", t.text).strip()), -len(t.roles)))
    for template in extra:
        if any(t.text == template.text for t in templates) or _covered(template, base):
            continue
        name, k = template.schema, 2
        while name in names:  # `take {x}` and `take {x} {y}` are different schemas
            name, k = f"{template.schema}_{k}", k + 1
        names.add(name)
        templates.append(attrs.evolve(template, schema=name))
    return attrs.evolve(base, templates=tuple(templates))


PROFILE_KEYS = frozenset({"name", "templates", "moves", "support", "passages", "effects"})


def declared_profile(declared: Object | str, base: Profile, folder: Path | None = None) -> Profile:
    """A profile given as data: a built-in's name, a JSON file (relative to `folder`), or the object itself.

    The object's fields (all optional): `templates` (strings, or `{"template": …, "schema": …}`), `moves`
    (schemas that are navigation), `support` (schemas that may be support actions; absent: any),
    `passages` (entity types whose actions prepare a move, like doors) and `effects` (schema → sentence
    over its roles). They extend `base`; a built-in named by `name` replaces it.
    """
    if isinstance(declared, str):
        if declared in PROFILES:
            return PROFILES[declared]
        declared = _read_profile(declared, Path(folder or "."))
    unknown = set(declared) - PROFILE_KEYS
    if unknown:
        raise ValueError(f"the profile has unknown fields: {', '.join(sorted(unknown))}")
    if "name" in declared:
        base = PROFILES.get(declared["name"]) or attrs.evolve(base, name=str(declared["name"]))
    rows = []
    for item in _list(declared, "templates"):
        if isinstance(item, str):
            rows.append((item, None))
        elif isinstance(item, dict) and isinstance(item.get("template"), str) \
                and isinstance(item.get("schema", ""), str):
            rows.append((item["template"], identifier(item["schema"], variable=False) if item.get("schema") else None))
        else:
            raise ValueError("each profile template is a string or {\"template\": …, \"schema\": …}")
    named = [Template.parse(text, schema) for text, schema in rows if schema]
    profile = attrs.evolve(base, templates=(*base.templates, *named))
    profile = _with_templates(profile, [text for text, schema in rows if not schema])
    effects = declared.get("effects", {})
    if not isinstance(effects, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in effects.items()):
        raise ValueError("the profile's `effects` map schemas to sentences")
    support = declared.get("support")
    return attrs.evolve(
        profile,
        nav_schemas=profile.nav_schemas | frozenset(_list(declared, "moves")),
        nav_types=profile.nav_types | frozenset(_list(declared, "passages")),
        support=(frozenset(_list(declared, "support")) | (profile.support or frozenset())) if support is not None
        else profile.support,
        effects={**profile.effects, **effects})


def _list(declared: Object, key: str) -> list[str]:
    value = declared.get(key, [])
    if key != "templates" and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
        raise ValueError(f"the profile's `{key}` is a list of schema names")
    if not isinstance(value, list):
        raise ValueError("the profile's `templates` is a list")
    return value


@functools.lru_cache(maxsize=64)
def _read_profile(name: str, folder: Path) -> Object:
    """A profile file (JSON object) named by a trace: inside the trace's folder, a regular file, bounded in size
    and depth (a FIFO, a device, a link out of the folder or 100,000-deep JSON is a ValueError, never a hang)."""

    path = folder / name
    try:
        data = loads(read_text(confined(name, [folder], what="profile path"), what="profile"))
    except (FileProblem, JSONProblem) as exc:
        raise ValueError(f"cannot read the profile {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the profile {path} is not a JSON object")
    return data


def _folder(trace: Episode) -> Path | None:
    return Path(trace.span.path).parent if trace.span is not None else None


def _covered(template: Template, profile: Profile) -> bool:
    """Whether a trace template (TextWorld writes `take {o} from {c}`) is already a profile template's shape."""
    shape = HOLE.sub("{}", template.text)
    return any(HOLE.sub("{}", t.text) == shape for t in profile.templates)


def parse_action(text: str, profile: Profile, entities: dict[str, str] | None) -> Action | None:
    """The action schema `text` instantiates, or None when no template fits."""
    command = " ".join(text.split())
    for template in profile.templates:
        m = template.regex.match(command)
        if not m:
            continue
        args = []
        for role, value in zip(template.roles, template.values(m)):
            if role in template.choices:
                args.append(Arg(role, value.lower(), "enum", entity=False))
                continue
            if entities is not None:
                kind = entities.get(value) or entities.get(value.lower())
                if kind is None:
                    break
            else:
                kind = "thing"
            args.append(Arg(role, value, kind))
        else:
            return Action(template.schema, tuple(args), command, template)
    return None


def normalise(trace: Episode, profile: Profile | None = None) -> tuple[Program | None, list[Diagnostic]]:
    """The trace as a program of actions, or None and an SKM403 warning naming the first unparsable action."""
    if profile is None:
        try:
            profile = profile_for(trace)
        except (ValueError, re.error) as exc:
            return None, [make(codes.UNPARSABLE_ACTION,
                               f"trace `{trace.id}` is left out: its templates are not valid ({exc})",
                               trace.span, hint="holes are `{role}` or `{role:word|word}`, each role used once")]
    actions = []
    for index, step in enumerate(trace.steps, 1):
        action = parse_action(step.action, profile, trace.entities)
        if action is None:
            return None, [make(codes.UNPARSABLE_ACTION,
                               f"trace `{trace.id}` is left out: step {index} `{step.action}` matches no action schema",
                               trace.span, hint=_hint(step.action, profile, trace))]
        actions.append(action)
    return Program(trace, tuple(actions), profile), []


def normalised(traces: Iterable[Episode]) -> tuple[list[tuple[Episode, Program]], list[Diagnostic]]:
    """The successful traces that normalise into programs, each with its program; the diagnostics of the rest."""
    kept, diagnostics = successful(traces)
    out: list[tuple[Episode, Program]] = []
    for trace in kept:
        program, problems = normalise(trace)
        diagnostics += problems
        if program is not None:
            out.append((trace, program))
    return out, diagnostics


def _starts_with(template: Template, verb: str) -> bool:
    """Whether the template's first word is `verb` (or a choice of words that includes it)."""
    first = template.text.split()[0] if template.text.split() else ""
    hole = HOLE.fullmatch(first)
    if hole:
        return verb in template.choices.get(hole.group(1), ())
    return first.lower() == verb


def _hint(action: str, profile: Profile, trace: Episode) -> str:
    words = action.split()
    verb = words[0].lower() if words else ""
    same = [t.text for t in profile.templates if _starts_with(t, verb)]
    if trace.entities is not None and same:
        return f"templates for `{verb}`: {', '.join(same[:4])}; is every entity listed in `entities`?"
    if same:
        return f"templates for `{verb}`: {', '.join(same[:4])}"
    return f"no template starts with `{verb}`; add one to the trace's `templates`"
