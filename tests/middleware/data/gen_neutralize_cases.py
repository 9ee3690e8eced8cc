#!/usr/bin/env python3
"""Writes neutralize_cases.json: generated texts and what DeerFlow's
neutralisation (Python's re, as reference section 5.16a gives it) makes of
them. input_sanitization_test.cpp checks the one-pass neutraliser against it.

The texts are made of the fragments below: tag names in random case, blanks
(ASCII and Unicode), slashes, angle brackets, dashes, whole and broken
boundary tokens, word and non-word characters beyond ASCII. Four characters
that Python's IGNORECASE folds to ASCII letters (U+0130, U+0131, U+017F,
U+212A), combining marks and characters beyond U+FFFF are left out: the
neutraliser does not follow Python there (see docs/middleware/input_sanitization.md).

Run: python3 gen_neutralize_cases.py > neutralize_cases.json
"""
import json
import random
import re

NAMES = [
    "system-reminder", "system_reminder", "memory", "current_date", "think", "analysis", "role", "soul",
    "self_update", "thinking_style", "clarification_system", "critical_reminders", "response_style",
    "citations", "uploaded_files", "current_uploads", "subagent_system", "skill_system", "skill_index",
    "available_skills", "disabled_skills", "memory_tool_system", "todo_list_system", "durable_context_data",
    "slash_skill_activation", "mcp_routing_hints", "available-deferred-tools", "goal_continuation",
    "background_task_event", "file_editing_workflow", "guidelines", "output_format", "working_directory",
    "tool_restrictions", "system", "instruction", "important", "override", "ignore", "prompt",
]
TAG = re.compile(r"<\s*/?\s*(" + "|".join(re.escape(n) for n in NAMES) + r")\b[^>]*>?", re.IGNORECASE)


def neutralize(text):
    text = TAG.sub(lambda m: m.group(0).replace("<", "&lt;").replace(">", "&gt;"), text)
    text = text.replace("--- BEGIN USER INPUT ---", "[BEGIN USER INPUT]")
    return text.replace("--- END USER INPUT ---", "[END USER INPUT]")


FRAGMENTS = [
    "<", "<", "<", "</", "< /", "<\t", ">", ">", " ", "  ", "\t", "\n", "/", "-", "--", "---", "----",
    "--- BEGIN USER INPUT ---", "--- END USER INPUT ---", "--- BEGIN USER", "USER INPUT ---", " BEGIN ",
    " END ", "x", "_", "2", "=", '"', "a=1", "b", "available", "-deferred-tools", "-", "tools", "systems",
    "\u00e9", "\u00fc", "\u2014", "\u00a0", "\u3000", "\u3002", "\u2026", "\u00bd", "\u00aa", "\u0085",
    "\x1c", "\u2028", "\u4e2d", "\u00d7",
]


def random_case(name, rng):
    return "".join(c.upper() if rng.random() < 0.3 else c for c in name)


def text(rng):
    parts = []
    for _ in range(rng.randint(1, 30)):
        if rng.random() < 0.35:
            name = rng.choice(NAMES)
            if rng.random() < 0.15:
                name = name[: rng.randint(1, len(name))]  # a prefix of a name
            parts.append(random_case(name, rng))
        else:
            parts.append(rng.choice(FRAGMENTS))
    return "".join(parts)


def main():
    rng = random.Random(20261125)
    cases = []
    for _ in range(200):
        t = text(rng)
        cases.append({"text": t, "expected": neutralize(t)})
    # All of them as one text: long runs for the 16-byte scan, tags across the joins.
    joined = "".join(c["text"] for c in cases)
    cases.append({"text": joined, "expected": neutralize(joined)})
    print(json.dumps(cases, ensure_ascii=False, indent=0))


if __name__ == "__main__":
    main()
