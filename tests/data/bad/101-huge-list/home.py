import os, sys
d = os.path.join(sys.argv[1], 'template')
os.makedirs(d)
open(os.path.join(d, 'bad.yaml'), 'w').write('base: []\nconfig:\n  environment:\n    setup:\n' + '      - echo\n' * 300000)
