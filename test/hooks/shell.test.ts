// Shell-command parsing for writes outside the workspace: one attack per trick a command
// line can use to hide a write, the benign forms that must stay inside, and property tests
// (the parser never throws; quoting cannot smuggle a redirect).
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadShellParser, parseShell } from "../../src/hooks/shell.js";
import { shellWrites, shellWritesSync } from "../../src/hooks/shell-writes.js";

const WS = "/work/ws";
const HOME = "/home/dev";
const at = (command: string, cwd?: string) => shellWritesSync(command, { workspace: WS, home: HOME, cwd });

beforeAll(async () => {
  await loadShellParser();
});
const DOLLAR = "$";

describe("shell writes outside the workspace (attacks)", () => {
  const cases: [string, string, string][] = [
    ["a plain redirect", "echo x > /etc/passwd", "/etc/passwd"],
    ["an append redirect", "echo 'export PATH=/tmp:$PATH' >> ~/.bashrc", `${HOME}/.bashrc`],
    ["a stderr redirect", "make 2> /var/log/make.log", "/var/log/make.log"],
    ["&> both streams", "make &>/srv/out", "/srv/out"],
    ["a clobber redirect >|", "date >| /etc/motd", "/etc/motd"],
    ["a read-write redirect <>", "cat <> /etc/hosts", "/etc/hosts"],
    [">& with a file", "ls >& /srv/listing", "/srv/listing"],
    ["a redirect glued to the word", "echo pwned>/etc/issue", "/etc/issue"],
    ["a redirect before the command", "> /etc/shadow echo", "/etc/shadow"],
    ["tee", "echo x | tee -a /etc/sudoers.d/me", "/etc/sudoers.d/me"],
    ["tee with several files", "echo x | tee out.txt /etc/cron.d/job", "/etc/cron.d/job"],
    ["cp", "cp payload.sh /usr/local/bin/ls", "/usr/local/bin/ls"],
    ["cp -t", "cp -t /usr/local/bin payload", "/usr/local/bin"],
    ["mv moves a file in from outside (the source goes away)", "mv /etc/hosts hosts.bak", "/etc/hosts"],
    ["install", "install -m 755 tool /usr/bin/tool", "/usr/bin/tool"],
    ["dd of=", "dd if=/dev/zero of=/boot/vmlinuz bs=1M count=1", "/boot/vmlinuz"],
    ["sed -i", "sed -i 's/^root:.*/root::0:0::/' /etc/passwd", "/etc/passwd"],
    ["sed -i with a suffix and -e", "sed -i.bak -e 's/a/b/' /etc/hosts", "/etc/hosts"],
    ["perl -pi -e", "perl -pi -e 's/a/b/' /etc/hosts", "/etc/hosts"],
    ["ln -s to a directory outside", "ln -s /etc etc-link", "/etc"],
    ["ln -s with a relative escape", "ln -s ../../../etc/passwd p", "/etc/passwd"],
    ["touch / rm / chmod", "chmod 777 /etc/shadow", "/etc/shadow"],
    ["rm of a parent", "rm -f ../other-project/index.js", "/work/other-project/index.js"],
    ["curl -o", "curl -sSo ~/.local/bin/tool https://example.com/tool", `${HOME}/.local/bin/tool`],
    ["wget -O", "wget -O /usr/bin/x https://example.com/x", "/usr/bin/x"],
    ["a .. escape", "echo x > ../../etc/cron.d/job", "/etc/cron.d/job"],
    ["a ~ path", "touch ~/.ssh/authorized_keys", `${HOME}/.ssh/authorized_keys`],
    ["$HOME", 'echo x > "$HOME/.profile"', `${HOME}/.profile`],
    ["braced HOME", `echo x > ${DOLLAR}{HOME}/.profile`, `${HOME}/.profile`],
    ["after ;", "ls; echo x > /etc/x", "/etc/x"],
    ["after &&", "npm test && echo x > /etc/x", "/etc/x"],
    ["after ||", "false || echo x > /etc/x", "/etc/x"],
    ["after a newline", "ls\necho x > /etc/x", "/etc/x"],
    ["after a background &", "sleep 1 & echo x > /etc/x", "/etc/x"],
    ["in a pipeline", "cat a | sort > /etc/x", "/etc/x"],
    ["in a subshell", "(cd src && echo x > /etc/x)", "/etc/x"],
    ["in a brace group", "{ echo x; } > /etc/x", "/etc/x"],
    ["in $( … )", "echo $(echo x > /etc/x)", "/etc/x"],
    ["in nested $( $( … ) )", 'echo "$(echo "$(tee /etc/x)")"', "/etc/x"],
    ["in backticks", "echo `echo x > /etc/x`", "/etc/x"],
    ["in process substitution >( … )", "ls > >(tee /etc/x)", "/etc/x"],
    ["a default value's $( … )", `echo ${DOLLAR}{X:-$(echo y > /etc/x)}`, "/etc/x"],
    ["in bash -c", "bash -c 'echo x > /etc/x'", "/etc/x"],
    ["in sh -lc", 'sh -lc "tee /etc/x < /dev/null"', "/etc/x"],
    ["in bash -c in bash -c", `bash -c "bash -c 'echo x > /etc/x'"`, "/etc/x"],
    ["in eval", "eval 'echo x > /etc/x'", "/etc/x"],
    ["behind env prefixes", "FOO=1 BAR=2 tee /etc/x", "/etc/x"],
    ["behind sudo with options", "sudo -u root -E tee /etc/x", "/etc/x"],
    ["behind env -i", "env -i PATH=/bin tee /etc/x", "/etc/x"],
    ["behind nohup / nice / timeout", "nohup nice -n 5 timeout 10 cp a /etc/x", "/etc/x"],
    ["behind find -exec", "find . -name a -exec cp {} /etc/x \\;", "/etc/x"],
    ["find -delete", "find /var/www -delete", "/var/www"],
    ["behind xargs -I (the destination is not last)", "ls | xargs -I{} cp {} /etc/", "/etc"],
    ["behind busybox", "busybox tee /etc/x", "/etc/x"],
    ["rsync", "rsync -a build/ /var/www/html", "/var/www/html"],
    ["tar -x -C", "tar -xzf payload.tgz -C /usr/local", "/usr/local"],
    ["tar xf --directory", "tar xf payload.tar --directory=/opt", "/opt"],
    ["unzip -d", "unzip -o payload.zip -d /etc/nginx", "/etc/nginx"],
    ["git config --global", "git config --global core.pager 'sh -c x'", `${HOME}/.gitconfig`],
    ["git config --file", "git config --file /etc/gitconfig alias.x '!sh'", "/etc/gitconfig"],
    ["after cd", "cd /etc && echo x > passwd", "/etc/passwd"],
    ["after cd ..", "cd .. && touch escaped", "/work/escaped"],
    ["after cd ~", "cd && touch .hushlogin", `${HOME}/.hushlogin`],
    ["a quoted redirect target", "echo x > '/etc/x'", "/etc/x"],
    ["a target spelled with escapes", "echo x > /e\\tc/x", "/etc/x"],
    ["a target spelled with $'\\x2f'", "echo x > $'\\x2fetc\\x2fx'", "/etc/x"],
    ["a command spelled with quotes", "\"t\"e'e' /etc/x", "/etc/x"],
    ["a heredoc into a file", "cat <<EOF > /etc/x\nhello\nEOF", "/etc/x"],
    ["a substitution inside a heredoc", "cat <<EOF\n$(echo x > /etc/x)\nEOF", "/etc/x"],
    ["a line continuation", "echo x \\\n > /etc/x", "/etc/x"],
  ];
  for (const [trick, command, target] of cases) {
    it(`a write outside the workspace hidden by ${trick} is found`, () => {
      const r = at(command);
      expect(r.parsed, r.reason).toBe(true);
      expect(r.outside).toContain(target);
    });
  }

  it("a symbolic link in the workspace that points out of it makes the write outside", async () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), "warden-shell-")));
    const away = realpathSync(mkdtempSync(join(tmpdir(), "warden-away-")));
    expect(away.startsWith(ws)).toBe(false);
    mkdirSync(join(ws, "src"));
    symlinkSync(away, join(ws, "out"));
    const r = await shellWrites("echo x > out/f && cp a src/b", { workspace: ws, home: HOME });
    // `away` is another temp directory: a scratch place, never the workspace.
    expect([...r.outside, ...(r.scratch ?? [])]).toEqual([join(ws, "out/f")]);
    expect(r.inside).toEqual([join(ws, "src/b")]);
  });

  it("a target the parser cannot know is unresolved, not inside", () => {
    for (const c of [
      'echo x > "$OUT"',
      "tee $(cat target)",
      "cd $DIR && touch f",
      "ls | xargs rm",
      'bash -c "$CMD"',
    ]) {
      const r = at(c);
      expect(r.parsed).toBe(true);
      expect(r.unresolved.length, c).toBeGreaterThan(0);
    }
  });

  it("a command it cannot parse is refused, not guessed", () => {
    for (const c of [
      "echo 'unterminated > /etc/x",
      'echo "x',
      "echo $(ls",
      "echo >",
      `${"$(".repeat(40)}x${")".repeat(40)}`,
    ]) {
      expect(at(c).parsed, c).toBe(false);
    }
  });
});

describe("shell writes that stay inside (no false alarms)", () => {
  it("ordinary development commands write nothing outside", () => {
    for (const c of [
      "npm test",
      "npm run build > build.log 2>&1",
      "git commit -m 'a > /etc/x'",
      'echo "> /etc/x is just text"',
      "grep -r 'foo' src > /dev/null",
      "ls 2>/dev/null | head -5",
      "cat a >&2",
      "echo x 1>&2",
      "sed 's/a/b/' /etc/hosts",
      "cp /etc/hosts ./hosts.copy",
      "ln -s ./src/lib lib && ls",
      "cd src && echo x > out.txt",
      "(cd /tmp && ls) && echo x > local.txt",
      "# echo x > /etc/x",
      "cat <<'EOF' > notes.md\n$(echo x > /etc/x)\nEOF",
      "diff <(sort a) <(sort b)",
    ]) {
      const r = at(c);
      expect(r.parsed, c).toBe(true);
      expect(r.outside, c).toEqual([]);
      expect(r.unresolved, c).toEqual([]);
    }
  });

  it("relative writes resolve against the shell's cwd when the host gives one", () => {
    expect(at("touch x", "/work/ws/pkg").inside).toEqual(["/work/ws/pkg/x"]);
    expect(at("touch x", "/opt").outside).toEqual(["/opt/x"]);
  });
});

describe("shell parser properties", () => {
  it("never throws, whatever the input", () => {
    const alphabet = fc.constantFrom(..."ab /.~$(){}`'\"\\;&|<>#\n\t-=0123*?[]!".split(""));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 200 }), (chars) => {
        const s = chars.join("");
        const p = parseShell(s, { home: HOME });
        expect(typeof p.ok).toBe("boolean");
        const w = at(s);
        expect(typeof w.parsed).toBe("boolean");
      }),
      { numRuns: 3000 },
    );
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (s) => typeof at(s).parsed === "boolean"));
  });

  it("quoting cannot smuggle a redirect: a quoted > … is an argument, an unquoted one is a write", () => {
    const target = fc.stringMatching(/^\/[a-z]{1,8}(\/[a-z]{1,8}){0,2}$/);
    const quote = fc.constantFrom(
      (t: string) => `'> ${t}'`,
      (t: string) => `"> ${t}"`,
      (t: string) => `\\> ${t}`,
    );
    fc.assert(
      fc.property(target, quote, (t, q) => {
        const quoted = at(`echo ${q(t)}`);
        expect(quoted.parsed).toBe(true);
        expect(quoted.outside).toEqual([]);
        const bare = at(`echo x > ${t}`);
        expect(bare.outside).toEqual(t.startsWith(WS) ? [] : [t]);
      }),
      { numRuns: 500 },
    );
  });

  it("a redirect survives any benign prefix and separator", () => {
    const prefix = fc.constantFrom(
      "",
      "ls; ",
      "true && ",
      "false || ",
      "cd src && ",
      "FOO=1 ",
      "sudo ",
      "(",
      "echo $(date) ",
    );
    fc.assert(
      fc.property(prefix, fc.constantFrom(">", ">>", "2>", "&>", ">|"), (p, op) => {
        const cmd = `${p}echo x ${op} /etc/x${p === "(" ? ")" : ""}`;
        expect(at(cmd).outside, cmd).toContain("/etc/x");
      }),
    );
  });
});
