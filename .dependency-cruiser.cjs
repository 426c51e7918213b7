// The walls between Postlane's layers (docs/architecture.md, "Walls"), checked by
// `npm run walls`. Violations that existed when a rule was added are listed in
// .dependency-cruiser-known-violations.json and ignored; any new one fails the check.

// Modules that run in the browser as well as on the server: the form definition and the form
// renderer (the hosted form's script and the dashboard's preview draw forms with the same code),
// the automation graph checker (the builder checks as you draw with the rules the API applies).
// The dashboard may import these and nothing else of src/; they import no Node built-in and no
// server module, so they stay safe to bundle for a browser.
const BROWSER_SHARED = [
  '^src/resources/forms/definition\\.ts$',
  '^src/resources/forms/embed/',
  '^src/resources/automations/graph\\.ts$',
  '^src/platform/event-filter\\.ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle makes load order matter and hides which module owns what.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'layers-know-no-feature',
      comment: 'platform/, mail/ and templating/ are used by every feature and know none of them.',
      severity: 'error',
      from: { path: '^src/(platform|mail|templating)/' },
      to: { path: '^src/resources/' },
    },
    {
      name: 'features-meet-through-public-faces',
      comment:
        "A feature uses another only through that feature's public face: its service.ts (or an " +
        'index.ts). Move what several features share to platform/ or re-export it from service.ts.',
      severity: 'error',
      from: { path: '^src/resources/([^/]+)/' },
      to: {
        path: '^src/resources/[^/]+/',
        pathNot: ['^src/resources/$1/', '^src/resources/[^/]+/(service|index)\\.ts$'],
      },
    },
    {
      name: 'dashboard-uses-generated-types-only',
      comment:
        'The browser code talks to the server over HTTP: from src/ it sees only the types ' +
        'generated from /openapi.json (dashboard/src/api/schema.d.ts) and the browser-shared ' +
        'modules (BROWSER_SHARED above), never server modules.',
      severity: 'error',
      from: { path: '^dashboard/src/' },
      to: { path: '^src/', pathNot: BROWSER_SHARED },
    },
    {
      name: 'browser-shared-stays-browser-safe',
      comment: 'A module the browser also runs imports only other browser-shared modules and npm packages.',
      severity: 'error',
      from: { path: BROWSER_SHARED },
      to: { path: '^src/', pathNot: BROWSER_SHARED },
    },
    {
      name: 'browser-shared-uses-no-node-builtin',
      comment: 'A module the browser also runs cannot use Node built-ins (node:fs, node:crypto…).',
      severity: 'error',
      from: { path: BROWSER_SHARED },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dashboard/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    skipAnalysisNotInRules: true,
    cache: false,
  },
};
