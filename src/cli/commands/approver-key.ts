// An approver's Ed25519 private key file, for the lifts approvers sign on the command line
// (`warden trust lift`, `warden quarantine lift`).
import { CliError, WardenError } from "../../contracts/index.js";
import { loadPrivateKeyFile } from "../../crypto/index.js";

/** The key pair in `path`; a key that is not an approver's Ed25519 private key is refused. */
export function loadApproverKey(path: string): ReturnType<typeof loadPrivateKeyFile> {
  let key: ReturnType<typeof loadPrivateKeyFile>;
  try {
    key = loadPrivateKeyFile(path);
  } catch (err) {
    // A coded refusal (a key file readable by others, a public key) is reported as it is.
    if (err instanceof WardenError) throw err;
    throw new CliError("ERR_CLI_INPUT", `${path} is not a readable private key file`, { cause: err });
  }
  if (key.publicKey.asymmetricKeyType !== "ed25519")
    throw new CliError("ERR_CLI_INPUT", "an approver signs lifts with an Ed25519 key");
  return key;
}
