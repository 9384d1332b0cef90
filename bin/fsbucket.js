#!/usr/bin/env -S node --max-semi-space-size=1
import { main } from '../dist/src/main.js'

await main(process.argv)
