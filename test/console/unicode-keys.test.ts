/**
 * The object browser under a folder whose keys are spelled two ways (NFC and
 * NFD), in a real headless Chromium. The gateway matches keys and prefixes
 * by their NFC form but lists each key as last written, so a row's name is
 * the part of the key after the folder found by NFC form: never a lone
 * combining accent left over from cutting by the prefix's length.
 */
import t from 'tap'
import { browser, listeningGateway } from './browser.js'

const composed = 'r\u00e9sum\u00e9' // résumé, NFC
const decomposed = 're\u0301sume\u0301' // résumé, NFD

const context = await browser(t)

t.test('a folder of keys spelled two ways shows the names under it', async t => {
  const { base, registry } = await listeningGateway(t, null)
  const photos = await registry.open('photos')
  if (photos === null) throw new Error('no bucket')
  await photos.put(`${decomposed}/one.txt`, '1')
  await photos.put(`${composed}/two.txt`, '2')
  await photos.put(`${decomposed}/inner/three.txt`, '3')
  for (const [spelled, folder] of [['composed', composed], ['decomposed', decomposed]]) {
    await t.test(`the folder opened by its ${spelled} name`, async t => {
      const page = await context.newPage()
      t.teardown(async () => { await page.close() })
      await page.goto(`${base}/_console/#/objects?${new URLSearchParams({ bucket: 'photos', prefix: `${folder}/` }).toString()}`)
      await page.locator('tr.object').nth(1).waitFor()
      const objects = await page.locator('tr.object button.link').allTextContents()
      t.same(objects.sort(), ['one.txt', 'two.txt'])
      t.same(await page.locator('tr.folder a.folder-link').allTextContents(), ['inner/'])
    })
  }
})
