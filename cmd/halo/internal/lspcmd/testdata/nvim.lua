-- Neovim, headless, as a person's editor: open the file, start halo lsp as its language
-- server (vim.lsp.start_client, Neovim 0.7), and write the diagnostics it shows.
local out = os.getenv('HALO_NVIM_OUT')
vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('HALO_NVIM_FILE')))
local bufnr = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  name = 'halo',
  cmd = { os.getenv('HALO_BIN'), 'lsp' },
  root_dir = vim.fn.getcwd(),
})
vim.lsp.buf_attach_client(bufnr, id)
local ok = vim.wait(30000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  local msg = d.message:gsub('\n', ' | ')
  table.insert(lines, string.format('%d:%d-%d %s %s', d.lnum, d.col, d.end_col, tostring(d.code), msg))
end
if not ok then
  table.insert(lines, 'TIMEOUT')
end
vim.fn.writefile(lines, out)
vim.lsp.stop_client(id)
vim.wait(2000, function() return vim.lsp.client_is_stopped(id) end, 50)
vim.cmd('qa!')
