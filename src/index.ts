export * from './bucket/index.js'
