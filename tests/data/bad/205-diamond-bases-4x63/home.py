import os, sys
h = sys.argv[1]
for d in ['template', 'l1', 'l2', 'l3', 'l4']:
    os.makedirs(os.path.join(h, d))
def write(path, layer, i):
    base = ', '.join('l%d.f%d' % (layer + 1, k) for k in range(63)) if layer < 4 else ''
    with open(os.path.join(h, path), 'w') as f:
        f.write('base: [%s]\nconfig: {environment: {setup: [s%d-%d]}}\n' % (base, layer, i))
write('template/bad.yaml', 0, 0)
for layer in range(1, 5):
    for i in range(63):
        write('l%d/f%d.yaml' % (layer, i), layer, i)
