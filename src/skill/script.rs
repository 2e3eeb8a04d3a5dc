//! The frame of an exported script in each language: its header, its
//! arguments, the body indented; and the literals and comments both write.

use std::fmt::Write as _;

use super::Skill;

/// Text from a page or a skill file as a comment's words: a line break
/// (or any control character, or JavaScript's own line separators) would
/// end the comment and make the rest of the text code.
pub(super) fn comment_words(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// A string literal, the same in both languages.
pub(super) fn lit(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// The description at the top of both scripts.
fn header(skill: &Skill, c: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{c} {}: exported by seamark from its skill.",
        comment_words(&skill.name)
    );
    let _ = writeln!(out, "{c} Task: {}", comment_words(&skill.task));
    let _ = writeln!(
        out,
        "{c} Learned {} from {}.",
        comment_words(&skill.learned),
        comment_words(&skill.learned_from)
    );
    let _ = writeln!(
        out,
        "{c} Secrets come from SECRET_<NAME>; the browser from CHROME_PATH, else Playwright's own."
    );
    out
}

/// `lines`, each indented `by` (an empty one left empty).
fn indent(lines: &[String], by: &str) -> String {
    lines
        .iter()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("{by}{l}\n")
            }
        })
        .collect()
}

/// The Python script around `body`, with `args` as its arguments.
pub(super) fn python(skill: &Skill, args: &[(String, Option<String>)], body: &[String]) -> String {
    let mut out = String::from("#!/usr/bin/env python3\n");
    out.push_str(&header(skill, "#"));
    out.push_str(
        r#"
import argparse
import os

from playwright.sync_api import sync_playwright


def secret(name):
    """A secret's value, from SECRET_<NAME>: never written in the script."""
    value = os.environ.get("SECRET_" + name.upper())
    if value is None:
        raise SystemExit(f"set SECRET_{name.upper()}: the secret {name} is needed")
    return value


def choose(select, label):
    """Selects the option whose text is `label`, case aside, as seamark does."""
    texts = select.locator("option").all_inner_texts()
    wanted = label.strip().lower()
    match = next((t.strip() for t in texts if t.strip().lower() == wanted), label)
    select.select_option(label=match)


def todo(what):
    """A step the skill left to the model: write it before running this."""
    raise NotImplementedError("TODO: " + what)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
"#,
    );
    let _ = writeln!(
        out,
        "    parser.add_argument(\"--url\", default={})",
        lit(&skill.site)
    );
    for (name, default) in args {
        let _ = match default {
            Some(v) => writeln!(
                out,
                "    parser.add_argument(\"--{name}\", default={})",
                lit(v)
            ),
            None => writeln!(out, "    parser.add_argument(\"--{name}\", required=True)"),
        };
    }
    out.push_str(
        r#"    parser.add_argument("--files", default=".", help="the folder uploads come from")
    parser.add_argument("--headful", action="store_true")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each element")
    args = parser.parse_args()

    def files_path(name):
        return os.path.join(args.files, name)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=os.environ.get("CHROME_PATH") or None, headless=not args.headful
        )
        page = browser.new_page()
        page.set_default_timeout(args.timeout * 1000)
        page.goto(args.url)
"#,
    );
    out.push_str(&indent(body, "        "));
    out.push_str(
        r#"        browser.close()


if __name__ == "__main__":
    main()
"#,
    );
    out
}

/// The TypeScript script around `body`, with `args` as its arguments.
pub(super) fn typescript(
    skill: &Skill,
    args: &[(String, Option<String>)],
    body: &[String],
) -> String {
    let mut out = header(skill, "//");
    out.push_str(
        r#"
import { chromium, type Locator } from "playwright";
import * as path from "path";

function secret(name: string): string {
  // A secret's value, from SECRET_<NAME>: never written in the script.
  const value = process.env["SECRET_" + name.toUpperCase()];
  if (value === undefined) throw new Error(`set SECRET_${name.toUpperCase()}: the secret ${name} is needed`);
  return value;
}

async function choose(select: Locator, label: string): Promise<void> {
  // Selects the option whose text is `label`, case aside, as seamark does.
  const texts = await select.locator("option").allInnerTexts();
  const wanted = label.trim().toLowerCase();
  const match = texts.map((t) => t.trim()).find((t) => t.toLowerCase() === wanted) ?? label;
  await select.selectOption({ label: match });
}

function todo(what: string): never {
  // A step the skill left to the model: write it before running this.
  throw new Error("TODO: " + what);
}

/** `--name value` pairs from the command line, over the defaults. */
function parse(defaults: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(defaults)) if (v !== undefined) out[k] = v;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (flag === "--headful") { out.headful = "true"; continue; }
    if (!flag.startsWith("--") || i + 1 >= argv.length) throw new Error(`unexpected argument ${flag}`);
    out[flag.slice(2)] = argv[i + 1];
    i += 1;
  }
  for (const [k, v] of Object.entries(defaults)) if (v === undefined && !(k in out)) throw new Error(`--${k} is required`);
  return out;
}

async function main(): Promise<void> {
  const args = parse({
"#,
    );
    let _ = writeln!(out, "    url: {},", lit(&skill.site));
    for (name, default) in args {
        let _ = writeln!(
            out,
            "    {name}: {},",
            default.as_deref().map_or("undefined".into(), lit)
        );
    }
    out.push_str(
        r#"    files: ".",
    timeout: "10",
  });
  const filesPath = (name: string): string => path.join(args.files, name);
  // Not every skill uses every helper: a strict project's noUnusedLocals.
  void [filesPath, secret, choose, todo];
  const browser = await chromium.launch({
    executablePath: process.env.CHROME_PATH || undefined,
    headless: args.headful !== "true",
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(Number(args.timeout) * 1000);
  await page.goto(args.url);
"#,
    );
    out.push_str(&indent(
        &body
            .iter()
            .map(|l| l.replace("files_path(", "filesPath("))
            .collect::<Vec<_>>(),
        "  ",
    ));
    out.push_str(
        r#"  await browser.close();
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
"#,
    );
    out
}
