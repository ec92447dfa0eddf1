// The model of a parsed command line (shell.ts): what runs, in order, with each word after
// quote removal. Plain data, no parser: the analyses (shell-writes.ts, shell-harm.ts) read it.

export const MAX_DEPTH = 24;
export const MAX_LENGTH = 256 * 1024;

export interface Word {
  /** The value after quote removal ($HOME, ${HOME} and a leading ~ expanded). */
  text: string;
  /** True when part of the value comes from an expansion the parser cannot know. */
  dynamic: boolean;
  /** Set on the word xargs fills from its standard input (data, not code the parser saw). */
  fromStdin?: boolean;
}

export interface Redirect {
  /** >, >>, >|, &>, &>>, <>, >&, <, <&, <<, <<-, <<< */
  op: string;
  fd: number | undefined;
  target: Word;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** Scripts nested in this command: $( … ), `…`, <( … ), >( … ), substitutions in heredocs. */
  nested: Script[];
  /** The text a heredoc or here-string feeds to the command's standard input. */
  stdin?: Word;
}

export type Item =
  | { kind: "command"; command: SimpleCommand }
  /** ( … ) (a subshell), { … }, if / while / for / case bodies; redirections apply to the whole. */
  | { kind: "group"; script: Script; subshell: boolean; redirects: Redirect[]; nested: Script[] }
  /** a | b | c: each stage's output is the next one's input. */
  | { kind: "pipeline"; stages: Script[] }
  | { kind: "function"; name: string; body: Script };

export interface Script {
  items: Item[];
  /** A >( … ) process substitution: it reads what its command writes. */
  readsOutput?: boolean;
}

export type ParseResult = { ok: true; script: Script } | { ok: false; reason: string };

export interface ShellParseOptions {
  /** The expansion of a leading ~ and of $HOME / ${HOME}. */
  home: string;
}

/** What the grammar could not read; shell.ts turns it into `{ ok: false }`, never a crash. */
export class ShellSyntaxError extends Error {}
