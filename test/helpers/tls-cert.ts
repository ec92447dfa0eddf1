// A throwaway TLS certificate for a loopback HTTPS server (P-256, one day, the name as CN and
// DNS subjectAltName), made in-process by the `selfsigned` devDependency: no key is committed
// and no openssl binary is needed.
import { generate } from "selfsigned";

export async function throwawayCertificate(name: string): Promise<{ key: string; cert: string }> {
  const notAfterDate = new Date(Date.now() + 24 * 3600 * 1000);
  const pems = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notAfterDate,
  });
  return { key: pems.private, cert: pems.cert };
}
