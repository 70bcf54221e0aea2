import { defineConfig } from 'vite';

// Relative asset URLs: the same build works at /demo/ on the API server and at / on any
// static file server.
export default defineConfig({
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
});
