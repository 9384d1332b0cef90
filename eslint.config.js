// `npm run lint` (with knip for unused files, exports and dependencies):
// typescript-eslint's type-aware recommended rules over src/, test/ and
// scripts/. Formatting is not linted: the code keeps its standard-like style
// (no semicolons, two spaces) by hand. Each rule turned off says why.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'test/clients/programs/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname
      }
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Underscored names and rest siblings are the house way to drop a field or argument on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // Store and door methods are async by contract (a throw becomes a rejection) even when their body has no await.
      '@typescript-eslint/require-await': 'off',
      // Parsed JSON (catalog rows, request bodies, API answers in tests) is typed at its use; these rules flag every such read.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Assertions this TypeScript finds redundant (some are needed under older lib typings, ArrayBuffer vs ArrayBufferLike) stay: removing them is churn.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // pg's type OIDs are a numeric enum, compared with the plain numbers the driver passes.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      // String(x) of an unknown input, in an error message, is deliberate.
      '@typescript-eslint/no-base-to-string': 'off',
      // `unknown | null` and `() => Promise<unknown> | unknown` document intent although `unknown` absorbs the rest.
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      // `{}` mirrors better-sqlite3's own constraint on bind parameters.
      '@typescript-eslint/no-empty-object-type': 'off',
      // Passing on a caught error unchanged is not a new non-Error rejection.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // The validators match control characters on purpose.
      'no-control-regex': 'off',
      // `catch {}` marks best-effort cleanup.
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Errors that restate a caught error's message for a person do not carry it again as a cause.
      'preserve-caught-error': 'off'
    }
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // tap queues subtests itself; t.test's promise needs no await.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: '@tapjs/test', name: 'test' }, { from: 'package', package: '@tapjs/core', name: 'test' }] }],
      // Tests keep a prototype's method to restore it after patching it.
      '@typescript-eslint/unbound-method': 'off'
    }
  },
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } }
  }
)
