import tseslint from "typescript-eslint";

export default tseslint.config(
    {ignores: ["node_modules/", "dist/", "out/", "coverage/", "test-results/", "bench-results/"]},
    ...tseslint.configs.recommended,
    {
        rules: {
            "indent": ["error", 4, {SwitchCase: 1}],
            "quotes": ["error", "double", {avoidEscape: true}],
            "semi": ["error", "always"],
            "@typescript-eslint/explicit-member-accessibility": ["error", {accessibility: "explicit", overrides: {constructors: "explicit"}}],
            "@typescript-eslint/no-unused-vars": ["error", {argsIgnorePattern: "^_"}],
            "@typescript-eslint/consistent-type-imports": ["error", {fixStyle: "inline-type-imports"}]
        }
    },
    {
        // The common layer runs anywhere: no Node, Electron or node-llama-cpp.
        files: ["src/core/common/**/*.ts"],
        rules: {
            "no-restricted-imports": ["error", {patterns: ["node:*", "electron", "node-llama-cpp", "better-sqlite3", "../node/*", "../../node/*"]}]
        }
    }
);
