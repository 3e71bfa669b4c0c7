import path from "node:path";
import {fileURLToPath} from "node:url";
import react from "@vitejs/plugin-react";
import {defineConfig} from "vite";

const repoRoot = path.dirname(fileURLToPath(import.meta.url));

/** The renderer: React, built into dist/renderer; relative asset paths so file:// (Electron) and web mode both load it. */
export default defineConfig({
    root: path.join(repoRoot, "renderer"),
    base: "./",
    plugins: [react()],
    // One React in the bundle: @tanstack/react-query (and react-markdown) must use the app's copy, or hooks break at run time.
    resolve: {dedupe: ["react", "react-dom"]},
    build: {
        outDir: path.join(repoRoot, "dist", "renderer"),
        emptyOutDir: true,
        target: "es2022",
        sourcemap: false,
        // No inline scripts or styles: the CSP forbids them.
        assetsInlineLimit: 0,
        modulePreload: {polyfill: false},
        // highlight.js grammars make one large chunk; it is loaded from disk, never the network.
        chunkSizeWarningLimit: 1500
    }
});
