// Whether a glob in a shell word may name a credential location (shell-harm.ts): `~/.ss?/*`,
// `~/.aws/cred*`, `.en?`. Bash's rules: * ? […] never cross a `/`, and a wildcard never
// matches a leading dot. A bare `*` is not taken to name `id_rsa`: only a glob with a literal
// start (`.e*`, `id_*`) is matched against credential file names.
import { basename, dirname } from "node:path";
import { type CodingProfile, isCredentialName } from "./coding-profile.js";

export const hasGlob = (text: string) => /[*?[]/.test(text);

function segment(glob: string): string {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") re += i === 0 ? "(?!\\.)[^/]*" : "[^/]*";
    else if (c === "?") re += i === 0 ? "(?!\\.)[^/]" : "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return re;
}

function regex(absGlob: string): RegExp {
  return new RegExp(`^${absGlob.split("/").map(segment).join("/")}$`);
}

const NAMES = [".env", ".env.local", ".env.production", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"];

/** Whether an absolute glob may match a credential location of the profile. */
export function globMayNameCredential(absGlob: string, profile: CodingProfile): boolean {
  if (absGlob.length > 1024) return true;
  // A credential location itself or anything below it: the glob's first segments match it.
  const segs = absGlob.split("/");
  const within = (c: string) => {
    const n = c.split("/").length;
    return segs.length >= n && regex(segs.slice(0, n).join("/")).test(c);
  };
  if (profile.credentials.some(within)) return true;
  const last = basename(absGlob);
  if (/^[*?[]/.test(last)) return false;
  const dir = dirname(absGlob);
  const nameRe = regex(last);
  return !hasGlob(dir) && NAMES.some((n) => nameRe.test(n) && isCredentialName(n));
}
