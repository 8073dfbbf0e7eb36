/**
 * The layers of src/, lowest first. A module may import modules of its own layer and of the layers below it, never
 * of a layer above; no import cycle, type-only imports included, is allowed anywhere.
 *
 * A folder that fits no layer is refused too (not-in-a-layer): give it one here.
 */
const layers = [
  { name: "json", paths: ["^src/json/", "^src/logical-call\\.ts$"] },
  { name: "errors", paths: ["^src/errors/"] },
  { name: "http, policy, transport", paths: ["^src/http/", "^src/policy/", "^src/transport/"] },
  { name: "window", paths: ["^src/window/"] },
  { name: "schema", paths: ["^src/schema/"] },
  { name: "record", paths: ["^src/record/"] },
  { name: "keys", paths: ["^src/keys/"] },
  { name: "store", paths: ["^src/store/"] },
  { name: "limits", paths: ["^src/limits/"] },
  { name: "surfaces, simulated", paths: ["^src/surfaces/", "^src/simulated/"] },
  { name: "config", paths: ["^src/config[^/]*\\.ts$"] },
  { name: "routing", paths: ["^src/routing/"] },
  { name: "pipeline, sessions, jobs", paths: ["^src/pipeline/", "^src/sessions/", "^src/jobs/", "^src/deps\\.ts$"] },
  { name: "routes", paths: ["^src/admin/", "^src/window-http/", "^src/dashboard/"] },
  { name: "app", paths: ["^src/app\\.ts$"] },
  { name: "runtime, clients", paths: ["^src/runtime/", "^src/clients/"] },
];

const layerRules = layers.slice(0, -1).map((layer, index) => ({
  name: `layer-${layer.name.replace(/, /g, "-")}`,
  comment: `A module of the ${layer.name} layer imports a higher layer: ${layers
    .slice(index + 1)
    .map((above) => above.name)
    .join(" / ")}.`,
  severity: "error",
  from: { path: layer.paths },
  to: { path: layers.slice(index + 1).flatMap((above) => above.paths) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import cycle, type-only imports included: move what both sides need to one module below them.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "not-in-a-layer",
      comment: "A module of src/ that no layer of .dependency-cruiser.cjs holds: add its folder to the layer it fits.",
      severity: "error",
      from: { path: "^src/", pathNot: layers.flatMap((layer) => layer.paths) },
      to: {},
    },
    ...layerRules,
  ],
  options: {
    includeOnly: "^src/",
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".d.ts"],
    },
  },
};
