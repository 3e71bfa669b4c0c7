import tseslint from "typescript-eslint";
import cleanroom from "./eslint-rules/layering.js";

// Packages that need Node, Electron or native code: only the layers whose runtime has them.
const nativeOrNodePackages = ["node-llama-cpp", "better-sqlite3-multiple-ciphers", "openai", "ws", "commander", "vite"];
/**
 * Which folders may import which: common -> nothing; base (Node helpers) -> nothing; node -> common, base; the front ends and hosts -> what
 * they run on; the developer tools (not shipped) -> anything but the app's UI; nothing shipped -> tools.
 */
const layers = {
    common: {folders: ["src/core/common/"], imports: [], noNodeBuiltins: true, deniedPackages: ["electron", ...nativeOrNodePackages]},
    // Small Node helpers (Node built-ins only) that the core and the Electron main process share: the main process may not import the core.
    base: {folders: ["src/base/"], imports: [], deniedPackages: ["electron", ...nativeOrNodePackages]},
    node: {folders: ["src/core/node/"], imports: ["common", "base"], deniedPackages: ["electron"]},
    renderer: {folders: ["renderer/"], imports: ["common"], noNodeBuiltins: true, deniedPackages: ["electron", ...nativeOrNodePackages]},
    preload: {folders: ["src/preload/"], imports: ["common"], deniedPackages: nativeOrNodePackages},
    main: {folders: ["src/main/"], imports: ["common", "base"], deniedPackages: nativeOrNodePackages},
    cli: {folders: ["src/cli/"], imports: ["common", "base", "node", "serve"], deniedPackages: ["electron"]},
    serve: {folders: ["src/serve/"], imports: ["common", "base", "node"], deniedPackages: ["electron"]},
    // Web mode's and the app's core processes host the local API server (Settings → Local API server).
    web: {folders: ["src/web/"], imports: ["common", "base", "node", "serve"], deniedPackages: ["electron"]},
    utility: {folders: ["src/utility/"], imports: ["common", "base", "node", "serve"], deniedPackages: ["electron"]},
    launch: {folders: ["src/launch/"], imports: ["common", "base", "node", "web"], deniedPackages: ["electron"]},
    tools: {folders: ["tools/"], imports: ["common", "base", "node", "cli"], deniedPackages: ["electron"]}
};

export default tseslint.config(
    {ignores: ["node_modules/", "dist/", "out/", "coverage/", "test-results/", "bench-results/"]},
    ...tseslint.configs.recommended,
    {
        rules: {
            "indent": ["error", 4, {SwitchCase: 1}],
            "quotes": ["error", "double", {avoidEscape: true}],
            "semi": ["error", "always"],
            "@typescript-eslint/explicit-member-accessibility": ["error", {accessibility: "explicit", overrides: {constructors: "explicit"}}],
            "@typescript-eslint/no-unused-vars": ["error", {argsIgnorePattern: "^_", ignoreRestSiblings: true}],
            "@typescript-eslint/consistent-type-imports": ["error", {fixStyle: "inline-type-imports"}],
            // esbuild (the compiled CLI, bin/cliBundle.mjs) keeps all of zod, every locale included, for `import {z}`, and only
            // what is used for `import * as z`: about 570 KB less JavaScript compiled by every CLI process (#25).
            "no-restricted-syntax": ["error", {
                selector: "ImportDeclaration[source.value='zod'] > :matches(ImportSpecifier[imported.name='z'], ImportDefaultSpecifier)",
                message: "Import zod as `import * as z from \"zod\"`: the CLI's bundle then leaves out what it does not use."
            }]
        }
    },
    {
        // The compiled CLI's launcher and builder: plain JavaScript for plain `node` (the launcher is CommonJS on purpose).
        files: ["bin/**/*.cjs", "bin/**/*.mjs"],
        rules: {"@typescript-eslint/no-require-imports": "off", "@typescript-eslint/explicit-member-accessibility": "off"}
    },
    {
        files: ["src/**/*.ts", "tools/**/*.ts", "renderer/**/*.ts", "renderer/**/*.tsx"],
        plugins: {cleanroom},
        rules: {"cleanroom/layering": ["error", layers]}
    }
);
