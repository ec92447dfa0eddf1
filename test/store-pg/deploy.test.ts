// deploy/: the compose file runs the configuration the cluster test starts, and the
// Kubernetes manifests carry what docs/distributed.md promises (probes, PDB, secrets).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { parseSidecarConfig } from "../../src/server/index.js";
import { ROOT } from "./cluster-helpers.js";

const DEPLOY = join(ROOT, "deploy");

describe("deploy/", () => {
  it("every sidecar of the compose file runs deploy/sidecar.yaml after the migration, URL from the environment", () => {
    const compose = parseYaml(readFileSync(join(DEPLOY, "docker-compose.yml"), "utf8"), { merge: true }) as {
      services: Record<
        string,
        { command?: string[]; environment?: Record<string, string>; depends_on?: object }
      >;
    };
    const sidecars = Object.entries(compose.services).filter(([n]) => n.startsWith("sidecar-"));
    expect(sidecars).toHaveLength(3);
    for (const [, s] of sidecars) {
      // The image's entry point is bin/warden.js; deploy/sidecar.yaml is mounted at this path.
      expect(s.command).toEqual(["sidecar", "--config", "/etc/warden/sidecar.yaml"]);
      expect(s.depends_on).toHaveProperty("migrate");
      expect(s.environment?.WARDEN_DB_URL).toMatch(/^postgres:\/\//);
    }
    expect(compose.services.migrate?.command).toEqual(["db", "migrate", "--url", "env:WARDEN_DB_URL"]);
    const loaded = parseSidecarConfig(parseYaml(readFileSync(join(DEPLOY, "sidecar.yaml"), "utf8")), DEPLOY);
    expect(loaded.config.store).toMatchObject({ kind: "postgres", url: "env:WARDEN_DB_URL" });
  });

  it("the Kubernetes manifests: readiness on /ready, liveness on /health, a PDB, secrets by reference", () => {
    const docs = readdirSync(join(DEPLOY, "k8s")).flatMap((f) =>
      parseAllDocuments(readFileSync(join(DEPLOY, "k8s", f), "utf8")).map(
        (d) => d.toJS() as { kind: string; spec?: unknown },
      ),
    );
    const kinds = docs.map((d) => d.kind).sort();
    expect(kinds).toEqual([
      "ConfigMap",
      "Deployment",
      "Job",
      "Kustomization",
      "NetworkPolicy",
      "PodDisruptionBudget",
      "Secret",
      "Secret",
      "Service",
    ]);
    const deployment = JSON.stringify(docs.find((d) => d.kind === "Deployment"));
    expect(deployment).toContain('"readinessProbe":{"httpGet":{"path":"/ready"');
    expect(deployment).toContain('"livenessProbe":{"httpGet":{"path":"/health"');
    expect(deployment).toContain('"secretKeyRef":{"name":"warden-db","key":"url"}');
  });
});
