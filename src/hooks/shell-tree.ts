// tree-sitter-bash's concrete syntax tree → the model of shell-model.ts: statements in order,
// pipelines as stages, groups (subshells, braces, loop and if bodies) with their
// redirections, function definitions with their bodies. Two known gaps of the grammar are
// mended where the tree still says plainly what bash does: `<>` (read-write) is parsed as `<`
// plus an error node, and a heredoc's operator swallows the rest of its line (`cat <<EOF | sh`,
// `cat <<EOF && x`) — the rest is put back after the command. Any other syntax error refuses.
import type { Node } from "web-tree-sitter";
import {
  type Item,
  MAX_DEPTH,
  type Redirect,
  type Script,
  type ShellParseOptions,
  ShellSyntaxError,
  type SimpleCommand,
  type Word,
} from "./shell-model.js";
import { heredocBody, kids, named, oneWord, type WordContext, words } from "./shell-words.js";

const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);
const SKIP = new Set(["comment", "heredoc_body", "heredoc_end", "heredoc_start"]);

class Converter {
  constructor(
    readonly opts: ShellParseOptions,
    readonly depth: number,
  ) {
    if (depth > MAX_DEPTH) throw new ShellSyntaxError(`nesting deeper than ${MAX_DEPTH}`);
  }

  cx(nested: Script[]): WordContext {
    return { home: this.opts.home, nested, sub: (nodes) => this.deeper().script(nodes) };
  }

  deeper(): Converter {
    return new Converter(this.opts, this.depth + 1);
  }

  script(nodes: readonly Node[]): Script {
    const items: Item[] = [];
    for (const n of nodes) this.statement(n, items);
    return { items };
  }

  statement(n: Node, out: Item[]): void {
    if (!n.isNamed || SKIP.has(n.type)) return;
    switch (n.type) {
      case "command":
        this.simple(n, out);
        return;
      case "redirected_statement":
        this.redirected(n, out);
        return;
      case "pipeline":
        out.push({ kind: "pipeline", stages: named(n).map((s) => this.deeper().script([s])) });
        return;
      case "subshell":
      case "compound_statement":
        out.push(this.group(named(n), n.type === "subshell", []));
        return;
      case "function_definition": {
        const body = n.childForFieldName("body");
        const name = n.childForFieldName("name")?.text ?? "";
        out.push({ kind: "function", name, body: this.deeper().script(body ? [body] : []) });
        return;
      }
      case "variable_assignment":
      case "variable_assignments":
      case "declaration_command":
      case "unset_command":
        this.simple(n, out);
        return;
      default:
        this.compound(n, out);
    }
  }

  /** if / while / for / case / negation / [[ … ]] / lists: statements inside, expansions of the rest. */
  compound(n: Node, out: Item[]): void {
    const inner: Item[] = [];
    const nested: Script[] = [];
    for (const c of kids(n)) {
      if (!c.isNamed) continue;
      if (isStatement(c)) this.statement(c, inner);
      else if (c.type !== "variable_name") for (const w of words(c, this.cx(nested))) void w;
    }
    if (n.type === "list" || n.type === "program" || n.type === "negated_command") out.push(...inner);
    else out.push({ kind: "group", script: { items: inner }, subshell: false, redirects: [], nested });
  }

  group(nodes: Node[], subshell: boolean, redirects: Redirect[]): Item {
    return { kind: "group", script: this.deeper().script(nodes), subshell, redirects, nested: [] };
  }

  simple(n: Node, out: Item[]): void {
    const rest: Node[] = [];
    const command = this.command(n, rest);
    this.putBack({ kind: "command", command }, rest, out);
  }

  /** A simple command: assignments and words in order (the program first after them). */
  command(n: Node, rest: Node[]): SimpleCommand {
    const cmd: SimpleCommand = { words: [], redirects: [], nested: [] };
    const cx = this.cx(cmd.nested);
    for (const c of kids(n)) {
      if (REDIRECTS.has(c.type)) this.redirect(c, cmd, rest);
      else if (c.type === "command_name") for (const x of named(c)) cmd.words.push(...words(x, cx));
      else if (c.type === "variable_assignment") cmd.words.push(assignment(c, cx));
      else if (c.isNamed) cmd.words.push(...words(c, cx));
      else if (/^(export|declare|local|readonly|typeset|unset|unsetenv)$/.test(c.type))
        cmd.words.push({ text: c.type, dynamic: false });
    }
    return cmd;
  }

  redirected(n: Node, out: Item[]): void {
    const body = n.childForFieldName("body");
    const redirects = kids(n).filter((c) => REDIRECTS.has(c.type));
    const rest: Node[] = [];
    const holder: SimpleCommand = { words: [], redirects: [], nested: [] };
    if (body === null || body.type === "command") {
      const cmd = body ? this.command(body, rest) : holder;
      for (const r of redirects) this.redirect(r, cmd, rest);
      this.putBack({ kind: "command", command: cmd }, rest, out);
      return;
    }
    for (const r of redirects) this.redirect(r, holder, rest);
    if (body.type === "list" || body.type === "pipeline") {
      // The grammar hangs `a && b > f` and `a | b > f` on the whole list; bash gives the
      // redirection to the last command.
      const items: Item[] = [];
      this.statement(body, items);
      const last = items.pop();
      if (last !== undefined) items.push(attach(last, holder));
      const tail = items.pop();
      out.push(...items);
      if (tail !== undefined) this.putBack(tail, rest, out);
      return;
    }
    const item = this.group([body], body.type === "subshell", holder.redirects);
    if (item.kind === "group") item.nested.push(...holder.nested);
    if (item.kind === "group" && holder.stdin)
      item.script.items.unshift({ kind: "command", command: holder });
    this.putBack(item, rest, out);
  }

  /** What a heredoc operator swallowed: `| b | c` makes a pipeline, `&& x` / `; x` follow. */
  putBack(item: Item, rest: Node[], out: Item[]): void {
    const [first, ...more] = rest;
    if (first?.type === "pipeline" && kids(first)[0]?.type === "|") {
      const stages = [{ items: [item] }, ...named(first).map((s) => this.deeper().script([s]))];
      out.push({ kind: "pipeline", stages });
      for (const m of more) this.statement(m, out);
      return;
    }
    out.push(item);
    for (const m of rest) this.statement(m, out);
  }

  redirect(r: Node, cmd: SimpleCommand, rest: Node[]): void {
    const cx = this.cx(cmd.nested);
    const parts = kids(r);
    const fdNode = parts.find((p) => p.type === "file_descriptor");
    const fd = fdNode ? Number(fdNode.text) : undefined;
    if (r.type === "herestring_redirect") {
      cmd.stdin = oneWord(
        named(r).find((p) => p.type !== "file_descriptor"),
        cx,
      );
      return;
    }
    if (r.type === "heredoc_redirect") {
      this.heredoc(r, cmd, fd, rest);
      return;
    }
    let op = parts.find((p) => !p.isNamed && p.type !== "ERROR")?.text ?? "";
    const err = parts.find((p) => p.isError || p.isMissing);
    if (err !== undefined) {
      // tree-sitter-bash reads `<>` as `<` and an error holding `>`.
      if (op === "<" && err.isError && err.text === ">") op = "<>";
      else
        throw new ShellSyntaxError(
          `syntax error in a redirection near ${JSON.stringify(r.text.slice(0, 40))}`,
        );
    }
    const targets = named(r).filter((p) => p.type !== "file_descriptor" && !p.isError);
    cmd.redirects.push({ op, fd, target: oneWord(targets[0], cx) });
  }

  heredoc(r: Node, cmd: SimpleCommand, fd: number | undefined, rest: Node[]): void {
    const cx = this.cx(cmd.nested);
    const start = r.children.find((c) => c?.type === "heredoc_start");
    const op = kids(r).find((c) => c.type === "<<" || c.type === "<<-")?.type ?? "<<";
    const delim = start?.text ?? "";
    const quoted = /['"\\]/.test(delim);
    cmd.redirects.push({ op, fd, target: { text: delim.replace(/['"\\]/g, ""), dynamic: false } });
    const body = kids(r).find((c) => c.type === "heredoc_body");
    if (body) cmd.stdin = heredocBody(body, quoted, cx);
    for (const c of kids(r)) {
      if (c.type === "file_redirect" || c.type === "herestring_redirect") this.redirect(c, cmd, rest);
      else if (c.isError || c.isMissing) throw new ShellSyntaxError("syntax error in a heredoc");
      else if (!SKIP.has(c.type) && c.type !== "<<" && c.type !== "<<-" && c.type !== "file_descriptor")
        rest.push(c);
    }
  }
}

/** Gives a redirection holder's redirections, substitutions and input to the last command of an item. */
function attach(item: Item, holder: SimpleCommand): Item {
  if (item.kind === "command") {
    const c = item.command;
    c.redirects.push(...holder.redirects);
    c.nested.push(...holder.nested);
    if (holder.stdin) c.stdin = holder.stdin;
    return item;
  }
  if (item.kind === "pipeline") {
    const stage = item.stages[item.stages.length - 1];
    const last = stage?.items.pop();
    if (stage && last) stage.items.push(attach(last, holder));
    return item;
  }
  if (item.kind === "group") {
    item.redirects.push(...holder.redirects);
    item.nested.push(...holder.nested);
    if (holder.stdin) item.script.items.unshift({ kind: "command", command: holder });
  }
  return item;
}

function isStatement(n: Node): boolean {
  return /statement|command|pipeline|list|subshell|function_definition|variable_assignment|do_group|_clause|case_item|negated/.test(
    n.type,
  );
}

/** NAME=value as one word (its substitutions nested). */
function assignment(n: Node, cx: WordContext): Word {
  const name = n.childForFieldName("name")?.text ?? "";
  const value = n.childForFieldName("value");
  if (value === null) return { text: `${name}=`, dynamic: false };
  const ws = words(value, cx);
  return { text: `${name}=${ws.map((w) => w.text).join(" ")}`, dynamic: ws.some((w) => w.dynamic) };
}

/**
 * Refuses a tree with a syntax error, except the one gap of the grammar mended in
 * `redirect`: an error node holding only `>` right after a redirection's `<`.
 */
function checkErrors(n: Node): void {
  if (!n.hasError && !n.isMissing) return;
  if (n.isMissing) throw new ShellSyntaxError(`syntax error: ${JSON.stringify(n.type)} missing`);
  if (n.isError) {
    const prev = n.previousSibling;
    const mended = n.text === ">" && prev?.type === "<" && n.parent?.type === "file_redirect";
    if (!mended) throw new ShellSyntaxError(`syntax error near ${JSON.stringify(n.text.slice(0, 40))}`);
    return;
  }
  for (const c of kids(n)) checkErrors(c);
}

/** The tree's root (a `program`) as a script. */
export function toScript(root: Node, opts: ShellParseOptions): Script {
  checkErrors(root);
  const c = new Converter(opts, 0);
  const items: Item[] = [];
  c.compound(root, items);
  return { items };
}
