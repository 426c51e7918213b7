// ESLint checks correctness only (no style: there is no formatter yet), with the type-aware
// rules that catch promises nobody waits for. `npm run lint`; docs/architecture.md "Walls".
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['node_modules/', 'dashboard/', 'test/', 'bench/', 'bin/'] },
  {
    files: ['src/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise that is neither awaited nor given a catch loses its error.
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise where a value or a plain callback is expected (an `if`, an event handler).
      '@typescript-eslint/no-misused-promises': 'error',
      // `await` of something that is not a promise is a mistake about its type.
      '@typescript-eslint/await-thenable': 'error',
      'no-unsafe-finally': 'error',
      'no-self-compare': 'error',
      'no-unreachable': 'error',
      'no-dupe-keys': 'error',
      'no-duplicate-case': 'error',
      'no-cond-assign': 'error',
      'use-isnan': 'error',
      'valid-typeof': 'error',
      'no-async-promise-executor': 'error',
    },
  },
);
